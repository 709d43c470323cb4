// tiktoken on npm ("tiktoken"): tiktoken's Rust core compiled to WebAssembly, used as its
// README shows: get_encoding(name) from the package's main entry for a bundled encoding,
// new Tiktoken(ranks text, special_tokens, pat_str) from "tiktoken/lite" over an
// encoding file's ranks.
//
// Its API is tiktoken's, spelled the same way: encode(text, allowed_special,
// disallowed_special) with an array of literals or "all" (defaults [] and "all"),
// encode_ordinary, encode_single_token(bytes), decode(tokens) -> bytes,
// decode_single_token_bytes, token_byte_values. So tiktoken's policy maps one to one, and
// its public paths are walked under the names of Python tiktoken's own (api-surface
// family "tiktoken", compared path by path with the Python reference).
//
// What is the adapter's, not the package's: decode(ids, errors) decodes the bytes of
// decode() with TextDecoder (fatal for errors="strict", ignoreBOM so a leading U+FEFF is
// kept as Python keeps it). The README's own `new TextDecoder().decode(enc.decode(ids))`
// drops a leading U+FEFF; that is walked as the path "TextDecoder(decode_bytes)".
// A Rust panic inside WASM surfaces as WebAssembly.RuntimeError "unreachable".

import fs from "node:fs";
import path from "node:path";
import { Surface, idList, idSpace, jsString, policies, snippet, vocabularyInfo } from "./common.mjs";
import { specialTokens, verifiedRanks } from "./ranks.mjs";

export const library = "tiktoken";

export async function encodings(ctx) {
  const folder = path.join(ctx.packageDir, "encoders");
  const names = fs.readdirSync(folder).filter((f) => f.endsWith(".json")).map((f) => f.slice(0, -5));
  return names.sort().map((encoding) => ({ encoding, id_space: idSpace(encoding), reason: null }));
}

function ranksOf(enc, specialIds) {
  const ranks = [];
  for (let rank = 0; ; rank++) {
    if (specialIds.has(rank)) continue;
    let bytes;
    try {
      bytes = enc.decode_single_token_bytes(rank);
    } catch {
      break;
    }
    ranks.push([rank, bytes]);
  }
  return ranks;
}

function digest(ctx, values) {
  const parts = [];
  for (const token of values) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(token.length, 0);
    parts.push(length, Buffer.from(token));
  }
  return `sha256:${ctx.sha256(Buffer.concat(parts))} n=${values.length}`;
}

function policyText(allowed, disallowed) {
  const part = (p) => (p === "all" ? '"all"' : JSON.stringify(p));
  return `${part(allowed)}, ${part(disallowed)}`;
}

/** The package's bundled encoding, or (ctx.encoding) one built from an encoding file's
 * ranks through its public constructor, as its README's custom-ranks example does:
 * `new Tiktoken(readFileSync("x.tiktoken").toString("utf-8"), special_tokens, pat_str)`
 * from "tiktoken/lite" (tiktoken 1.0.22, lite/tiktoken.d.ts). Its pattern is compiled by
 * the Rust regex inside WASM, so the Python pattern is passed unchanged. */
async function encoder(ctx, encoding) {
  if (!ctx.encoding) {
    const { get_encoding } = await ctx.load("tiktoken");
    const bundled = JSON.parse(fs.readFileSync(path.join(ctx.packageDir, "encoders", `${encoding}.json`), "utf8"));
    return { enc: get_encoding(encoding), specials: Object.entries(bundled.special_tokens || {}),
      importLine: `import { get_encoding } from "tiktoken"; // npm install tiktoken@${ctx.version} (WASM)`,
      call: `get_encoding(${JSON.stringify(encoding)})` };
  }
  const { Tiktoken } = await ctx.load("tiktoken/lite");
  const { text } = verifiedRanks(ctx);
  const file = ctx.encoding.ranks_file.split("/").pop();
  return { enc: new Tiktoken(text, specialTokens(ctx), ctx.encoding.pattern), specials: ctx.encoding.special_tokens,
    importLine: `import { Tiktoken } from "tiktoken/lite"; import { readFileSync } from "node:fs"; // npm install tiktoken@${ctx.version} (WASM)`,
    call: `new Tiktoken(readFileSync(${jsString(file)}, "utf-8"), special_tokens, ${jsString(ctx.encoding.pattern)})` };
}

export async function build(ctx, encoding) {
  const { enc, specials, importLine, call } = await encoder(ctx, encoding);
  const literals = specials.map(([s]) => s);
  const specialIds = new Set(specials.map(([, id]) => id));
  const classify = (op, error) => {
    const decoding = op === "decode" || op === "decode_bytes" || op === "token_bytes";
    if (decoding && (error instanceof WebAssembly.RuntimeError || /unwrap_throw/.test(String(error?.message)))) return "unknown-id";
    if (op === "decode" && error instanceof TypeError && /encoded data was not valid/i.test(error.message)) return "invalid-utf8";
    if (/special token that is not allowed/.test(String(error?.message))) return "disallowed-special";
    if (op === "encode_single_token" && /unwrap_throw/.test(String(error?.message))) return "unknown-token";
    return null;
  };
  const adapter = {
    info: {
      encoding: idSpace(encoding),
      special_tokens: specials,
      language: "JavaScript (WASM)",
      capabilities: {
        special_policy: "tiktoken",
        encode_ordinary: true,
        api_surface: "tiktoken",
        // declared, never timed (issue 20): one encode of 100,000 letters took 15 s here
        // (2-core machine, 2026-12-02; 10,000 CJK characters 1 s), quadratic on one piece
        long_limit: 10000,
        notes: [
          "allowed_special/disallowed_special take tiktoken's values with tiktoken's meaning (its Rust core)",
          "decode returns bytes; decode(errors) here is TextDecoder over them (fatal for 'strict', ignoreBOM), " +
            "the README's `new TextDecoder().decode(...)` is walked as api-surface path TextDecoder(decode_bytes)",
          "its pattern runs inside WASM (Rust regex): pretokenize is not exposed; no batch encode",
        ],
      },
      // over an encoding file: the file's own hash (walking ~130k tokens per build buys nothing)
      vocabulary: ctx.encoding ? [[ctx.encoding.ranks_file.split("/").pop(), ctx.encoding.sha256]]
        : vocabularyInfo(ctx, encoding, ranksOf(enc, specialIds)),
    },
    encode(text, policy) {
      return enc.encode(text, policy.allowed, policy.disallowed);
    },
    encode_ordinary(text) {
      return enc.encode_ordinary(text);
    },
    decode_bytes(ids) {
      return enc.decode(ids);
    },
    decode(ids, errors) {
      if (errors !== "replace" && errors !== "strict") throw new ctx.Unsupported(`errors=${JSON.stringify(errors)} has no TextDecoder mode`);
      return new TextDecoder("utf-8", { fatal: errors === "strict", ignoreBOM: true }).decode(enc.decode(ids));
    },
    token_bytes(id) {
      return enc.decode_single_token_bytes(id);
    },
    classify,
    api_attributes() {
      const s = new Surface((op, e) => classify(op, e) || "internal-error");
      s.call("name", "other", () => enc.name);
      s.call("special_tokens_set", "other", () => [...literals].sort());
      const values = s.call("token_byte_values()", "other", () => enc.token_byte_values());
      if (values.ok) s.rows[s.rows.length - 1][2] = digest(ctx, values.value);
      s.call("decode_bytes[2**32]", "decode", () => enc.decode([2 ** 32]));
      s.call("decode_bytes[-1]", "decode", () => enc.decode([-1]));
      s.call("encode_single_token[invalid-utf8]", "encode_single_token", () => enc.encode_single_token(new Uint8Array([0xff, 0xfe])));
      return s.rows;
    },
    api_surface(text) {
      const s = new Surface((op, e) => classify(op, e) || "internal-error");
      const encoded = {};
      for (const [label, allowed, disallowed] of policies(text, literals)) {
        encoded[label] = s.call(`encode[${label}]`, "encode", () => Array.from(enc.encode(text, allowed, disallowed)));
      }
      const ordinary = s.call("encode_ordinary", "encode", () => Array.from(enc.encode_ordinary(text)));
      s.call("encode_single_token[text]", "encode_single_token", () => enc.encode_single_token(new TextEncoder().encode(text)));
      const source = encoded.all.ok ? encoded.all : ordinary;
      if (!source.ok) return s.rows;
      const ids = source.value;
      s.call("decode_bytes", "decode", () => enc.decode(ids));
      s.call("TextDecoder(decode_bytes)", "decode", () => new TextDecoder().decode(enc.decode(ids)));
      // as Python tiktoken's walk (implementations/tiktoken_surface.py): each distinct ID once
      const distinct = [...new Set(ids)];
      const singles = s.call("decode_single_token_bytes[distinct]", "decode", () => distinct.map((id) => enc.decode_single_token_bytes(id)));
      if (singles.ok) {
        s.call("encode_single_token[pieces]", "encode_single_token", () => singles.value.map((b) => enc.encode_single_token(b)));
      }
      return s.rows;
    },
    snippet(check, kind, text, policy, ids) {
      if (ids != null) return snippet(importLine, `Array.from(${call}.decode(${idList(ids)}))`);
      if (/TextDecoder/.test(kind || "")) {
        return snippet(importLine, `new TextDecoder().decode(((e) => e.decode(e.encode(${jsString(text)}, "all")))(${call}))`);
      }
      return snippet(importLine, `Array.from(${call}.encode(${jsString(text)}, ${policyText(policy.allowed, policy.disallowed)}))`);
    },
  };
  return adapter;
}
