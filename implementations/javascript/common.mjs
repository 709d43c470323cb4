// What the JavaScript adapters share: encodings and their pinned files, the canonical
// hash of a bundled rank table, walking an API surface into outcomes, and the two-line
// Node snippets the report shows for a divergence.

/** The ID space tokconf compares an encoding in (GPT-2 and r50k_base are one). */
export function idSpace(encoding) {
  return encoding === "gpt2" ? "r50k_base" : encoding;
}

/** The pinned vocabulary file (harness/vocab.py) whose ranks an encoding uses. */
export const PINNED_FILE = {
  gpt2: "r50k_base.tiktoken",
  r50k_base: "r50k_base.tiktoken",
  p50k_base: "p50k_base.tiktoken",
  p50k_edit: "p50k_base.tiktoken",
  cl100k_base: "cl100k_base.tiktoken",
  o200k_base: "o200k_base.tiktoken",
  o200k_harmony: "o200k_base.tiktoken",
};

/**
 * SHA-256 of a rank table written as a .tiktoken file: one line per rank, in rank order,
 * "base64(token bytes) rank\n". That is the published file's own format, so a package
 * that bundles exactly the published ranks (in whatever form: base64 runs, JSON strings,
 * byte arrays) hashes to the pinned SHA-256 of harness/vocab.py.
 *
 * entries: an iterable of [rank, Uint8Array].
 */
export function rankTableHash(ctx, entries) {
  const sorted = [...entries].sort((a, b) => a[0] - b[0]);
  const lines = sorted.map(([rank, bytes]) => `${Buffer.from(bytes).toString("base64")} ${rank}\n`);
  return { sha256: ctx.sha256(Buffer.from(lines.join(""), "ascii")), ranks: sorted.length };
}

/** The adapter info's "vocabulary": [[pinned file name, sha256 of what is bundled]]. */
export function vocabularyInfo(ctx, encoding, entries) {
  const { sha256 } = rankTableHash(ctx, entries);
  return [[PINNED_FILE[encoding] ?? `${encoding}.tiktoken`, sha256]];
}

/** A JavaScript string literal for any text (ASCII, every other code unit escaped). */
export function jsString(text) {
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g,
    (unit) => "\\u" + unit.charCodeAt(0).toString(16).padStart(4, "0"));
}

/** Surface paths as the harness reads them (harness.calls.surface_from_data):
 * [path, "ok", value] or [path, "raised", category, native type, message]. */
export class Surface {
  constructor(classify) {
    this.classify = classify;
    this.rows = [];
  }

  /** Run fn() as path; returns {ok, value} so later paths can use the value. */
  call(path, op, fn) {
    try {
      const value = fn();
      this.rows.push([path, "ok", value]);
      return { ok: true, value };
    } catch (error) {
      this.rows.push([path, "raised", this.classify(op, error), nativeType(error), String(error?.message ?? error).slice(0, 300)]);
      return { ok: false, error };
    }
  }

  async callAsync(path, op, fn) {
    try {
      const value = await fn();
      this.rows.push([path, "ok", value]);
      return { ok: true, value };
    } catch (error) {
      this.rows.push([path, "raised", this.classify(op, error), nativeType(error), String(error?.message ?? error).slice(0, 300)]);
      return { ok: false, error };
    }
  }
}

export function nativeType(error) {
  if (typeof WebAssembly !== "undefined" && error instanceof WebAssembly.RuntimeError) return "WebAssembly.RuntimeError";
  if (error instanceof Error) return `js.${error.constructor?.name || "Error"}`;
  return `js.${typeof error}`;
}

/** tiktoken's policy names for the surface walk: [label, allowed, disallowed]. */
export function policies(text, specials) {
  const out = [["default", [], "all"], ["all", "all", []], ["ordinary", [], []]];
  const present = specials.filter((s) => text.includes(s)).sort((a, b) => text.indexOf(a) - text.indexOf(b));
  if (present.length > 0) out.push(["one", [present[0]], "all"]);
  return out;
}

/** Two lines of Node (ESM) that show a call without tokconf: an import, a console.log. */
export function snippet(importLine, expression) {
  return `${importLine}\nconsole.log(JSON.stringify(${expression}));`;
}

/** IDs as a JavaScript array literal. */
export function idList(ids) {
  return `[${Array.from(ids).join(", ")}]`;
}
