// tokconf's Node worker: hosts one JavaScript adapter and answers calls over the framed
// protocol of harness/worker/protocol.py (frames and values: ./protocol.mjs).
//
//   node worker.mjs [--in FD] [--out FD]                  serve (protocol on FD, default 0/1)
//   node worker.mjs --probe --project DIR --module KIND=PATH ...   list adapters, print JSON
//
// Started by harness.worker.launch (limits, network namespace, protocol moved to fds 3/4
// so a package that prints cannot corrupt a frame), from harness.worker.node.
//
// The first message is {"type": "load", "adapter": "KIND:ENCODING", "setup": {"node":
// {"project": DIR, "modules": {KIND: PATH}, "encoding": null or {...}}}}. DIR is a Node project (package.json,
// node_modules, the lock file) made by `tokconf env add npm:...`; its file
// tokconf-load.mjs imports a package from there, so packages resolve as they would for
// a user's own code in that project (ESM conditions, that project's versions). PATH is an
// adapter module (implementations/javascript/*.mjs) exporting
//
//   library                      the npm package it drives ("js-tiktoken")
//   encodings(ctx)               -> [{encoding, id_space, reason}] the package offers
//   build(ctx, encoding)         -> the adapter: {info, encode, decode_bytes, ...}
//
// ctx = {project, load(specifier), version, packageDir, Unsupported, sha256(bytes),
// encoding}: encoding is null for an encoding the package bundles, or, for a port over
// an encoding file's ranks, {name, ranks_file, sha256, pattern, special_tokens} (see
// implementations/javascript/ranks.mjs). An adapter's methods are the operations of
// harness.calls.InProcess; one it lacks answers "unsupported". What it throws becomes {"raised": [category, type, message]}: category
// from its classify(op, error) or the defaults below, type "js.<constructor name>"
// ("WebAssembly.RuntimeError" for a trap inside WASM).

import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { pathToFileURL } from "node:url";
import {
  ProtocolError, decodeValue, encodeValue, okOutcome, raisedOutcome, readFrame, writeFrame,
} from "./protocol.mjs";

export class Unsupported extends Error {
  constructor(message) {
    super(message);
    this.name = "Unsupported";
  }
}

const OPERATIONS = new Set([
  "encode", "encode_ordinary", "encode_batch", "decode_bytes", "decode", "token_bytes",
  "pretokenize", "trace", "in_domain", "api_surface", "api_attributes", "snippet", "decode_stream",
]);
const FOLLOWED = new Set(["encode", "encode_ordinary"]);
// A list asked in one call (harness.worker.client.WorkerExecutor._bulk): the single
// operation on each item, every value in one outcome. One that does not succeed ends the
// call with tokconf.AskApart (harness.outcomes.ASK_APART), and the client asks each item
// in a call of its own, so every item keeps the outcome its own call gives.
const BULK = new Map([["encode_many", "encode"], ["token_bytes_many", "token_bytes"], ["api_surfaces", "api_surface"]]);
// A list asked with the answers expected of it (harness/worker/differing.py): the single
// operation on each item, and only the positions whose answer is not exactly the expected
// one go back. A failure differs; the parent asks that item again on its own.
const DIFFERING = new Map([["encode_differing", "encode"], ["token_bytes_differing", "token_bytes"]]);

function parseArgs(argv) {
  const args = { in: 0, out: 1, probe: false, project: null, modules: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--in") args.in = Number(argv[++i]);
    else if (a === "--out") args.out = Number(argv[++i]);
    else if (a === "--probe") args.probe = true;
    else if (a === "--project") args.project = argv[++i];
    else if (a === "--module") {
      const [kind, file] = argv[++i].split(/=(.*)/s);
      args.modules[kind] = file;
    } else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

// -- network ---------------------------------------------------------------------------------

/** Keep the hosted package off the network from inside Node too (the launcher's network
 * namespace, where the OS grants one, stops everything else). */
async function blockNetwork() {
  const refuse = (what) => () => {
    throw new Error(`tokconf: network access is blocked in a worker (${what})`);
  };
  const net = await import("node:net");
  const tls = await import("node:tls");
  const dgram = await import("node:dgram");
  const dns = await import("node:dns");
  net.Socket.prototype.connect = refuse("net.Socket.connect");
  for (const [module, names] of [[net, ["connect", "createConnection"]], [tls, ["connect"]],
    [dgram, ["createSocket"]], [dns, ["lookup", "resolve", "resolve4", "resolve6"]],
    [dns.promises, ["lookup", "resolve", "resolve4", "resolve6"]]]) {
    for (const name of names) {
      try {
        Object.defineProperty(module.default ?? module, name, { value: refuse(name), configurable: true });
      } catch {
        // a frozen namespace object: the default export above is the mutable one
      }
    }
  }
  globalThis.fetch = refuse("fetch");
  if ("WebSocket" in globalThis) globalThis.WebSocket = refuse("WebSocket");
}

function networkInfo() {
  const given = process.env.TOKCONF_NETWORK;
  if (given) {
    try {
      const parsed = JSON.parse(given);
      return { namespace: Boolean(parsed.namespace), socket_block: true, detail: `${parsed.detail}; in Node: net, tls, dgram, dns and fetch blocked` };
    } catch {
      // fall through: started by hand with a malformed variable
    }
  }
  return { namespace: false, socket_block: true, detail: "net, tls, dgram, dns and fetch blocked in Node (started without tokconf's launcher: no network namespace)" };
}

// -- adapters --------------------------------------------------------------------------------

function readVersion(project, library) {
  try {
    return JSON.parse(fs.readFileSync(path.join(project, "node_modules", library, "package.json"), "utf8")).version;
  } catch {
    return null;
  }
}

async function context(project, library) {
  const loader = path.join(project, "tokconf-load.mjs");
  if (!fs.existsSync(loader)) {
    throw new Unavailable(`${project} is not a tokconf Node project (no tokconf-load.mjs): add it again with \`tokconf env add npm:...\``);
  }
  const { load } = await import(pathToFileURL(loader).href);
  return {
    project,
    load,
    version: readVersion(project, library),
    packageDir: path.join(project, "node_modules", library),
    Unsupported,
    sha256: (data) => crypto.createHash("sha256").update(data).digest("hex"),
  };
}

class Unavailable extends Error {}

async function loadModule(modules, kind) {
  const file = modules[kind];
  if (!file) throw new Unavailable(`no JavaScript adapter module for kind ${JSON.stringify(kind)} (known: ${Object.keys(modules).join(", ") || "none"})`);
  return import(pathToFileURL(file).href);
}

async function build(name, setup) {
  const node = (setup && setup.node) || {};
  const split = name.indexOf(":");
  if (split < 0) throw new Unavailable(`${name} is not KIND:ENCODING`);
  const kind = name.slice(0, split);
  const encoding = name.slice(split + 1);
  const module = await loadModule(node.modules || {}, kind);
  const ctx = node.project ? await context(node.project, module.library) : { Unsupported, sha256: (d) => crypto.createHash("sha256").update(d).digest("hex"), version: null };
  // a port over an encoding file's ranks (implementations/javascript/ranks.py), else null
  ctx.encoding = node.encoding ?? null;
  const adapter = await module.build(ctx, encoding);
  const info = {
    language: "JavaScript",
    provider: "",
    custom_domain: false,
    reproduce_flags: [],
    special_tokens: [],
    ...adapter.info,
    name,
    library: adapter.info.library ?? `npm:${module.library}`,
  };
  return { adapter, info, version: ctx.version ?? null };
}

// -- calls -----------------------------------------------------------------------------------

function nativeType(error) {
  if (typeof WebAssembly !== "undefined" && error instanceof WebAssembly.RuntimeError) return "WebAssembly.RuntimeError";
  if (error instanceof Error) return `js.${error.constructor?.name || error.name || "Error"}`;
  return `js.${typeof error}`;
}

function defaultCategory(op, error) {
  if (error instanceof Unsupported) return "unsupported";
  const message = String(error?.message ?? error);
  if (error instanceof RangeError && /call stack|Invalid (string|array|typed array) length|allocation failed/i.test(message)) {
    return "input-too-large";
  }
  if (/disallowed special token|special token that is not allowed/i.test(message)) return "disallowed-special";
  return "internal-error";
}

async function runMany(hosted, single, items, rest) {
  const values = [];
  for (let n = 0; n < items.length; n++) {
    const outcome = await run(hosted, single, [items[n], ...rest]);
    if (!("ok" in outcome)) {
      const [category, type, message] = outcome.raised ?? ["crashed", "", JSON.stringify(outcome)];
      return raisedOutcome("internal-error", "tokconf.AskApart", `item ${n}: raised ${category} (${type}): ${message}`);
    }
    values.push(outcome.ok); // already the protocol's value
  }
  return { ok: values };
}

/** encode_differing [texts, policy, expected IDs or null] or token_bytes_differing [IDs,
 * expected bytes joined, each one's length]: the positions that differ, as one value. */
async function runDiffering(hosted, op, args) {
  const single = DIFFERING.get(op);
  let items, rest, expected;
  if (op === "encode_differing") {
    [items, , expected] = args;
    rest = [args[1]];
  } else {
    const [ids, joined, lengths] = args;
    items = ids;
    rest = [];
    expected = [];
    let at = 0;
    for (const length of lengths ?? []) {
      expected.push(encodeValue(joined.subarray(at, at + length)));
      at += length;
    }
  }
  if (!Array.isArray(items) || !Array.isArray(expected) || expected.length !== items.length) {
    return raisedOutcome("internal-error", "tokconf.ProtocolError", `${op}: ${items?.length} items for ${expected?.length} expected values`);
  }
  const positions = [];
  for (let n = 0; n < items.length; n++) {
    const outcome = await run(hosted, single, [items[n], ...rest]);
    if (!("ok" in outcome) || !sameValue(outcome.ok, expected[n])) positions.push(n);
  }
  return { ok: positions };
}

/** Whether an answer (the protocol's value) is exactly the expected IDs or bytes. */
function sameValue(got, wanted) {
  if (Array.isArray(got)) {
    return Array.isArray(wanted) && got.length === wanted.length && got.every((value, i) => value === wanted[i]);
  }
  if (got !== null && typeof got === "object" && typeof got.b === "string") {
    return wanted !== null && typeof wanted === "object" && got.b === wanted.b;
  }
  return false;
}

async function run(hosted, op, args) {
  const { adapter } = hosted;
  if (BULK.has(op)) return runMany(hosted, BULK.get(op), args[0] ?? [], args.slice(1));
  if (DIFFERING.has(op)) return runDiffering(hosted, op, args);
  if (!OPERATIONS.has(op)) return raisedOutcome("internal-error", "js.Error", `unknown adapter operation ${op}`);
  const method = adapter[op];
  if (typeof method !== "function") return raisedOutcome("unsupported", "js.Unsupported", `${hosted.info.name} has no ${op}`);
  let value;
  try {
    value = await method.apply(adapter, args);
  } catch (error) {
    const category = (adapter.classify && adapter.classify(op, error)) || defaultCategory(op, error);
    const message = String(error?.message ?? error).slice(0, 500);
    return raisedOutcome(category, nativeType(error), message);
  }
  try {
    return okOutcome(value);
  } catch (error) {
    return raisedOutcome("internal-error", "tokconf.UnserializableValue", `${op} returned a value that ${error.message}`);
  }
}

async function answer(hosted, call, out) {
  const args = (call.args || []).map(decodeValue);
  const outcome = await run(hosted, call.op, args);
  writeFrame(out, { type: "outcome", n: call.n, outcome });
  if (!call.follow) return;
  const follow = [];
  if ("ok" in outcome && FOLLOWED.has(call.op) && Array.isArray(outcome.ok)) {
    const ids = outcome.ok;
    const wanted = [["decode_bytes", [ids]], ["decode", [ids, "replace"]]];
    for (const id of new Set(ids)) wanted.push(["token_bytes", [id]]);
    for (const [op, opArgs] of wanted) {
      follow.push([op, opArgs.map(encodeValue), await run(hosted, op, opArgs)]);
    }
  }
  writeFrame(out, { type: "follow", n: call.n, calls: follow });
}

async function serve(args) {
  // Whatever a package prints goes to stderr: stdout may be the protocol stream.
  const toStderr = (...parts) => process.stderr.write(parts.map(String).join(" ") + "\n");
  console.log = console.info = console.debug = console.warn = toStderr;
  process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest);
  const first = readFrame(args.in);
  if (first === null) return 0;
  if (first.type !== "load") {
    writeFrame(args.out, { type: "error", message: `expected a load message first, got ${JSON.stringify(first.type)}` });
    return 2;
  }
  const network = networkInfo();
  await blockNetwork();
  let hosted;
  try {
    hosted = await build(first.adapter, first.setup);
  } catch (error) {
    const message = error instanceof Unavailable ? error.message : `${nativeType(error)}: ${error?.message ?? error}`;
    writeFrame(args.out, { type: "error", message: `cannot build ${first.adapter} in Node ${process.version}: ${message}` });
    return 0;
  }
  writeFrame(args.out, { type: "ready", info: infoJson(hosted.info), network, pid: process.pid, version: hosted.version });
  for (;;) {
    const message = readFrame(args.in);
    if (message === null || message.type === "exit") return 0;
    if (message.type !== "calls") {
      writeFrame(args.out, { type: "error", message: `unknown message type ${JSON.stringify(message.type)}` });
      return 2;
    }
    for (const call of message.calls) await answer(hosted, call, args.out);
  }
}

/** AdapterInfo as protocol.py's info_to_json writes it (lists for tuples). */
function infoJson(info) {
  const out = {};
  for (const [key, value] of Object.entries(info)) out[key] = key === "capabilities" ? capabilitiesJson(value) : encodeValue(value);
  return out;
}

function capabilitiesJson(capabilities) {
  const out = {};
  for (const [key, value] of Object.entries(capabilities || {})) out[key] = encodeValue(value);
  return out;
}

async function probe(args) {
  const adapters = [];
  for (const [kind, file] of Object.entries(args.modules)) {
    const module = await import(pathToFileURL(file).href);
    const ctx = await context(args.project, module.library);
    if (ctx.version === null) continue; // not installed in this project
    for (const offer of await module.encodings(ctx)) {
      adapters.push({
        name: `${kind}:${offer.encoding}`, encoding: offer.id_space, library: `npm:${module.library}`,
        version: ctx.version, reason: offer.reason ?? null,
      });
    }
  }
  process.stdout.write(JSON.stringify({ node: process.version, adapters }) + "\n");
  return 0;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  try {
    return await (args.probe ? probe(args) : serve(args));
  } catch (error) {
    if (error instanceof ProtocolError) {
      process.stderr.write(`tokconf Node worker: protocol error: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

process.exitCode = await main();
