//! Mounts the results site; everything else is in the library.
fn main() {
    repoprobe_site::main();
}
