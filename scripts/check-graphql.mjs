// Validates every GraphQL query the tests left in a directory against GitHub's public schema
// (`schema.graphql` of npm `@octokit/graphql-schema`, built and checked by npm `graphql`):
//
//   node scripts/check-graphql.mjs DIR [--expect OPERATION ...]
//
// Run by scripts/test.sh after `cargo test`, which leaves one `<OperationName>.graphql` per
// query `repoprobe curate` sends (crates/repoprobe-github/src/queries.rs, `ALL`). Prints
// `NAME: valid` per query; fails (exit 1) when one does not parse or validate (each error with
// its line and column), when one does not declare exactly the operation its file is named
// by, when the directory holds none, or when an expected operation is missing.
//
// The schema is built as `buildSchema` builds it, less the fields GitHub's schema defines twice
// identically (see withoutRepeatedFields). The two packages are read from GRAPHQL_TOOLS
// (default: tools/graphql, where test.sh installs the pinned versions).

import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
if (args.length === 0 || args[0].startsWith("--")) {
    console.error("usage: node scripts/check-graphql.mjs DIR [--expect OPERATION ...]");
    process.exit(2);
}
const dir = args[0];
const at = args.indexOf("--expect");
const expected = at < 0 ? [] : args.slice(at + 1);

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tools = resolve(process.env.GRAPHQL_TOOLS || join(root, "tools", "graphql"));
const require = createRequire(join(tools, "package.json"));
const { GraphQLError, Kind, buildASTSchema, parse, print, validate, visit } = require("graphql");
// The package exports only its index (for `import`), so its schema is read by path.
const schemaFile = join(tools, "node_modules", "@octokit", "graphql-schema", "schema.graphql");
const schemaPackage = JSON.parse(readFileSync(join(dirname(schemaFile), "package.json"), "utf8"));
const schemaName = `@octokit/graphql-schema ${schemaPackage.version}`;
const schema = buildASTSchema(withoutRepeatedFields(parse(readFileSync(schemaFile, "utf8"))));

/**
 * The schema's document with each field defined again identically (bar its description) in
 * the same type left out. GitHub's schema as published defines some twice (15.26.1:
 * `EnterpriseOwnerInfo.repositoryDeployKeySetting` and `…Organizations`), which `buildSchema`
 * refuses outright; a field defined twice differently is kept, for it to refuse still. All the
 * rest of the schema is built and checked as `buildSchema` would.
 */
function withoutRepeatedFields(sdl) {
    const once = (type) => {
        if (!type.fields) return undefined;
        const seen = new Map();
        const fields = type.fields.filter((field) => {
            const shape = print({ ...field, description: undefined });
            const before = seen.get(field.name.value);
            if (before === undefined) seen.set(field.name.value, shape);
            return before !== shape;
        });
        return fields.length === type.fields.length ? undefined : { ...type, fields };
    };
    return visit(sdl, { ObjectTypeDefinition: once, InterfaceTypeDefinition: once });
}

/** An error as one line: its message and where (`line L, column C`) in the document. */
function describe(error) {
    const where = (error.locations || []).map((l) => `line ${l.line}, column ${l.column}`);
    return where.length ? `${error.message} (at ${where.join("; ")})` : error.message;
}

let files;
try {
    files = readdirSync(dir).filter((f) => f.endsWith(".graphql")).sort();
} catch (e) {
    console.error(`${dir}: ${e.message}`);
    process.exit(1);
}
if (files.length === 0) {
    console.error(`no query (*.graphql) in ${dir}`);
    process.exit(1);
}

let bad = 0;
const seen = new Set();
for (const file of files) {
    const name = basename(file, ".graphql");
    const text = readFileSync(join(dir, file), "utf8");
    seen.add(name);
    let errors;
    try {
        const doc = parse(text);
        const ops = doc.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
        const names = ops.map((o) => (o.name ? o.name.value : "(anonymous)"));
        errors = validate(schema, doc);
        if (names.length !== 1 || names[0] !== name) {
            const declared = names.join(", ") || "no operation";
            errors = [...errors, new GraphQLError(`declares ${declared}, not ${name} alone`)];
        }
    } catch (e) {
        if (!(e instanceof GraphQLError)) throw e;
        errors = [e]; // a syntax error
    }
    if (errors.length === 0) {
        console.log(`${name}: valid`);
        continue;
    }
    bad += 1;
    console.error(`${name}: INVALID against ${schemaName}`);
    for (const e of errors) console.error(`  ${describe(e)}`);
}
for (const name of expected) {
    if (!seen.has(name)) {
        console.error(`${name}: no query of that operation was left in ${dir} by the tests`);
        bad += 1;
    }
}
if (bad) {
    console.error(`GraphQL check: ${bad} failed`);
    process.exit(1);
}
