// A port over an encoding file's ranks (implementations/javascript/ranks.py): the verified
// .tiktoken file the Python side names in ctx.encoding, read and written in a package's
// own rank format, and the pattern checked the way the package compiles it.

import fs from "node:fs";

/** The .tiktoken text of ctx.encoding and its [rank, bytes] entries, read only once its
 * SHA-256 is the one the Python side verified or wrote (a changed file is refused). */
export function verifiedRanks(ctx) {
  const { ranks_file: file, sha256 } = ctx.encoding;
  const data = fs.readFileSync(file);
  const actual = ctx.sha256(data);
  if (actual !== sha256) throw new Error(`rank file ${file} hashes to ${actual}, not ${sha256}: refused`);
  const text = data.toString("ascii");
  const entries = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    const [token, rank] = line.split(" ");
    entries.push([Number.parseInt(rank, 10), new Uint8Array(Buffer.from(token, "base64"))]);
  }
  return { text, entries };
}

/** The encoding's special tokens as the packages take them: {literal: ID}. */
export function specialTokens(ctx) {
  return Object.fromEntries(ctx.encoding.special_tokens);
}

/**
 * js-tiktoken's bpe_ranks text: per run of consecutive ranks, one line
 * "NAME FIRST_RANK base64 base64 ...". Its constructor (js-tiktoken 1.0.21,
 * dist/chunk-*.js, `ranks.bpe_ranks.split("\n")` then `[_, offsetStr, ...tokens]`)
 * ignores NAME; its bundled tables (dist/ranks/*.js) write "!" there, as here.
 */
export function jsTiktokenRanks(entries) {
  const sorted = [...entries].sort((a, b) => a[0] - b[0]);
  const lines = [];
  let run = null;
  for (const [rank, bytes] of sorted) {
    if (run === null || rank !== run.next) {
      run = { first: rank, next: rank, tokens: [] };
      lines.push(run);
    }
    run.tokens.push(Buffer.from(bytes).toString("base64"));
    run.next = rank + 1;
  }
  return lines.map((r) => `! ${r.first} ${r.tokens.join(" ")}`).join("\n");
}

/** Compile the encoding's pattern as the package does; a SyntaxError makes the port
 * unavailable (the build fails with why) rather than fail every call. */
export function compiledPattern(ctx, library, flags) {
  try {
    return new RegExp(ctx.encoding.pattern, flags);
  } catch (error) {
    throw new Error(`${library}@${ctx.version} compiles the ${ctx.encoding.name} pattern with the JavaScript RegExp ` +
      `engine (flags '${flags}') and Node ${process.version} cannot: ${error.message}`);
  }
}
