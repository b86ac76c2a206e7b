//! A real one-node Slurm cluster of the tests' own (Debian's `slurm-wlm` and `munge`): munged,
//! slurmctld and slurmd started in the foreground with their keys, configuration, state and
//! logs in a temporary directory and ports of their own, stopped (every job cancelled first)
//! when dropped. Needs root (slurmd starts jobs as their user) and the packages, which
//! `scripts/setup-slurm.sh` installs; without them the tests say SKIPPED, and fail under
//! `CI=true`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

pub struct Slurm {
    /// Keys, configuration, state and logs; removed when the cluster is dropped.
    _dir: tempfile::TempDir,
    pub conf: PathBuf,
    daemons: Vec<Child>,
}

/// Why this machine cannot run the cluster, if it cannot: what is missing and how to get it.
fn missing() -> Option<(String, &'static str)> {
    for bin in [
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "squeue",
        "scontrol",
        "scancel",
    ] {
        let found = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .chain(["/usr/sbin".into(), "/usr/bin".into()])
            .any(|d| d.join(bin).is_file());
        if !found {
            return Some((
                format!("{bin} is not installed"),
                "install Slurm and munge with `bash scripts/setup-slurm.sh`",
            ));
        }
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some((
            "the test cluster's slurmd must run as root".into(),
            "run the tests as root, as CI does",
        ));
    }
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("0.0.0.0:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Slurm's states are read by running its commands: polled every 100 ms.
fn poll(what: &str, deadline: Duration, mut ok: impl FnMut() -> bool) {
    super::wait::every(Duration::from_millis(100), what, deadline, || {
        if ok() { Ok(()) } else { Err(String::new()) }
    })
}

impl Slurm {
    /// Starts the cluster, or `None` (SKIPPED on stderr) where it cannot run; under `CI=true`
    /// that is a failure.
    pub fn start() -> Option<Slurm> {
        if let Some((why, install)) = missing() {
            return super::needs::missing(&format!("no test cluster: {why}"), install);
        }
        let dir = tempfile::Builder::new()
            .prefix("rp-slurm")
            .tempdir()
            .unwrap();
        let d = dir.path().to_path_buf();
        let d = d.as_path();
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        let mut key = vec![0u8; 1024];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut key)
            .unwrap();
        let key_file = d.join("munge/munge.key");
        std::fs::write(&key_file, &key).unwrap();
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o400)).unwrap();
        std::fs::set_permissions(d.join("munge"), std::fs::Permissions::from_mode(0o711)).unwrap();
        let socket = d.join("munge/sock");
        let log = |name: &str| std::fs::File::create(d.join("log").join(name)).unwrap();
        let mut daemons = Vec::new();
        daemons.push(
            Command::new("munged")
                .args(["-F", "-f"])
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--key-file={}", key_file.display()))
                .arg(format!("--log-file={}", d.join("log/munged.log").display()))
                .arg(format!("--pid-file={}", d.join("munge/pid").display()))
                .arg(format!("--seed-file={}", d.join("munge/seed").display()))
                .stdout(log("munged.out"))
                .stderr(log("munged.err"))
                .spawn()
                .expect("munged"),
        );
        let mut cluster = Slurm {
            conf: d.join("slurm.conf"),
            _dir: dir,
            daemons,
        };
        poll("munged's socket", Duration::from_secs(20), || {
            socket.exists()
        });
        let host = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let conf = format!(
            "ClusterName=rptest\nSlurmctldHost={host}\nSlurmctldPort={}\nSlurmdPort={}\n\
             SlurmUser=root\nSlurmdUser=root\nAuthType=auth/munge\nCredType=cred/munge\n\
             AuthInfo=socket={}\nStateSaveLocation={}\nSlurmdSpoolDir={}\n\
             SlurmctldPidFile={}\nSlurmdPidFile={}\nSlurmctldLogFile={}\nSlurmdLogFile={}\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
             SchedulerType=sched/backfill\nReturnToService=2\nMpiDefault=none\n\
             JobCompType=jobcomp/none\nAccountingStorageType=accounting_storage/none\n\
             NodeName={host} CPUs={cpus} RealMemory=4000 State=UNKNOWN\n\
             PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP \
             OverSubscribe=FORCE:8\n",
            free_port(),
            free_port(),
            socket.display(),
            d.join("state").display(),
            d.join("spool").display(),
            d.join("slurmctld.pid").display(),
            d.join("slurmd.pid").display(),
            d.join("log/slurmctld.log").display(),
            d.join("log/slurmd.log").display(),
        );
        std::fs::write(&cluster.conf, conf).unwrap();
        for daemon in ["slurmctld", "slurmd"] {
            let child = Command::new(daemon)
                .arg("-D")
                .arg("-f")
                .arg(&cluster.conf)
                .env("SLURM_CONF", &cluster.conf)
                .stdout(log(&format!("{daemon}.out")))
                .stderr(log(&format!("{daemon}.err")))
                .spawn()
                .unwrap_or_else(|e| panic!("{daemon}: {e}"));
            cluster.daemons.push(child);
            if daemon == "slurmctld" {
                poll("slurmctld", Duration::from_secs(30), || {
                    cluster
                        .cmd("sinfo")
                        .arg("-h")
                        .output()
                        .is_ok_and(|o| o.status.success())
                });
            }
        }
        poll("the node to be idle", Duration::from_secs(60), || {
            cluster
                .cmd("sinfo")
                .args(["-h", "-o", "%t"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        Some(cluster)
    }

    /// A Slurm client command of this cluster (nothing of the caller's environment but PATH).
    pub fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
            .env("SLURM_CONF", &self.conf);
        c
    }

    /// Runs a client command, asserting that it succeeded; returns its stdout.
    pub fn run(&self, program: &str, args: &[&str]) -> String {
        let out = self.cmd(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// Submits `job` (a command line and its environment, as a `Command` holds them) as the
    /// job array `array` through the repository's batch script; returns the job id. Task
    /// `%a`'s output goes to `<dir>/<name>-<a>.log`.
    pub fn submit_array(&self, array: &str, dir: &Path, name: &str, job: &Command) -> String {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../deploy/slurm/repoprobe-array.sbatch")
            .canonicalize()
            .unwrap();
        let mut c = self.cmd("sbatch");
        for (k, v) in job.get_envs() {
            if let Some(v) = v {
                c.env(k, v);
            }
        }
        c.arg("--parsable")
            .arg(format!("--array={array}"))
            .arg(format!("--chdir={}", dir.display()))
            .arg(format!("--output={}/{name}-%a.log", dir.display()))
            .arg(script)
            .arg(job.get_program())
            .args(job.get_args());
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "sbatch: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// The states of a job's tasks (`RUNNING`, `PENDING`, …), none once all have ended.
    pub fn states(&self, job: &str) -> Vec<String> {
        self.run("squeue", &["-h", "-j", job, "-o", "%T"])
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Waits until every task of `job` has ended (at most `deadline`).
    pub fn wait(&self, job: &str, deadline: Duration) {
        poll(&format!("job {job} to end"), deadline, || {
            self.states(job).is_empty()
        });
    }

    pub fn wait_for(&self, what: &str, deadline: Duration, ok: impl FnMut() -> bool) {
        poll(what, deadline, ok)
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        let _ = self.cmd("scancel").args(["--full", "-u", "root"]).output();
        std::thread::sleep(Duration::from_millis(300));
        for d in self.daemons.iter_mut().rev() {
            // SAFETY: a signal to our own child.
            unsafe {
                libc::kill(d.id() as i32, libc::SIGTERM);
            }
        }
        for d in self.daemons.iter_mut().rev() {
            let start = Instant::now();
            while d.try_wait().ok().flatten().is_none() && start.elapsed() < Duration::from_secs(10)
            {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}
