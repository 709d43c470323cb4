// gpt-tokenizer (npm "gpt-tokenizer"): a pure-JavaScript BPE with its own encoder, chat
// helpers and streaming decoders, used as its README shows: the functions of
// "gpt-tokenizer/encoding/<name>" (chat through "gpt-tokenizer/model/<model>").
//
// Special tokens: encode(text, {allowedSpecial, disallowedSpecial}) takes a Set of
// literals or "all" for each (an array is a TypeError: "allowedSpecial?.has is not a
// function"). tiktoken's policy maps to: allowed "all" -> "all", else a Set; disallowed
// "all" -> "all", else a Set; tiktoken's allowed "all" with disallowed "all" (which means
// nothing is disallowed) -> allowedSpecial "all" alone, since gpt-tokenizer throws on
// both "all". What it does with them is its own and is reported as it is.
//
// Decoding: decode(tokens) -> string only. decode_bytes/token_bytes read the byte table
// decode itself reads (strings and byte arrays per rank, then the special tokens);
// decode(errors="strict") is unsupported. gpt-tokenizer decodes with one TextDecoder
// shared by the whole module, in streaming mode, never flushed: its state carries from
// one call to the next. So every decode is preceded here by a flush of that decoder, and
// behaves as the first decode of a fresh process; what a second call gives is its own
// surface path ("decode[again]").

import fs from "node:fs";
import path from "node:path";
import { Surface, idList, idSpace, jsString, policies, snippet, vocabularyInfo } from "./common.mjs";

export const library = "gpt-tokenizer";

/** The chat model module per encoding (the encoding modules have no model name). */
const CHAT_MODEL = { cl100k_base: "gpt-4", o200k_base: "gpt-4o" };

export async function encodings(ctx) {
  const folder = path.join(ctx.packageDir, "esm", "encoding");
  const names = fs.readdirSync(folder).filter((f) => f.endsWith(".js")).map((f) => f.slice(0, -3));
  return names.sort().map((encoding) => ({ encoding, id_space: idSpace(encoding), reason: null }));
}

/** tiktoken's (allowed, disallowed) -> gpt-tokenizer's options; undefined for the default. */
function options(allowed, disallowed) {
  if (Array.isArray(allowed) && allowed.length === 0 && disallowed === "all") return undefined;
  const out = { allowedSpecial: allowed === "all" ? "all" : new Set(allowed) };
  if (!(allowed === "all" && disallowed === "all")) {
    out.disallowedSpecial = disallowed === "all" ? "all" : new Set(disallowed);
  }
  return out;
}

function optionsText(allowed, disallowed) {
  const opts = options(allowed, disallowed);
  if (opts === undefined) return "";
  const part = (v) => (v === "all" ? '"all"' : v.size === 0 ? "new Set()" : `new Set(${JSON.stringify([...v])})`);
  const fields = [`allowedSpecial: ${part(opts.allowedSpecial)}`];
  if ("disallowedSpecial" in opts) fields.push(`disallowedSpecial: ${part(opts.disallowedSpecial)}`);
  return `, { ${fields.join(", ")} }`;
}

async function* fromArray(ids) {
  for (const id of ids) yield id;
}

export async function build(ctx, encoding) {
  const api = (await ctx.load(`gpt-tokenizer/encoding/${encoding}`)).default;
  const { decoder } = await ctx.load("gpt-tokenizer/BytePairEncodingCore");
  const core = api.bytePairEncodingCoreProcessor;
  const chatModel = CHAT_MODEL[encoding] ? await ctx.load(`gpt-tokenizer/model/${CHAT_MODEL[encoding]}`) : null;
  const encoder = new TextEncoder();
  const specials = [...core.specialTokensEncoder.entries()];
  const literals = specials.map(([s]) => s);
  const fresh = () => decoder.decode(); // flush: the next decode starts a new stream
  const bytesOf = (id) => {
    const value = core.tryDecodeToken(id);
    if (value === undefined) throw new RangeError(`Token ${id} is not in the byte pair encoder.`);
    return typeof value === "string" ? encoder.encode(value) : value;
  };
  const ranks = [];
  core.bytePairRankDecoder.forEach((value, rank) => {
    ranks.push([rank, typeof value === "string" ? encoder.encode(value) : Uint8Array.from(value)]);
  });
  // the token of the lone byte 0xE4 (the first byte of a 3-byte character)
  const partial = ranks.find(([, bytes]) => bytes.length === 1 && bytes[0] === 0xe4)?.[0];
  const importLine = `import * as gpt from "gpt-tokenizer/encoding/${encoding}"; // npm install gpt-tokenizer@${ctx.version}`;
  const classify = (op, error) => {
    const message = String(error?.message ?? error);
    if (/is not in the byte pair encoder/.test(message)) return "unknown-id";
    if (/Disallowed special token/.test(message)) return "disallowed-special";
    return null;
  };
  const adapter = {
    info: {
      encoding: idSpace(encoding),
      special_tokens: specials,
      capabilities: {
        special_policy: "tiktoken",
        encode_ordinary: false,
        pretokenize: true,
        api_surface: "gpt-tokenizer",
        // declared, never timed (issue 20): one encode of 100,000 CJK characters took over
        // 30 s, of 10,000 about 1 s, of 100,000 letters or spaces 4-6 s (o200k_base and
        // cl100k_base, 2-core machine at load 2, 2026-12-02)
        long_limit: 10000,
        notes: [
          "allowedSpecial/disallowedSpecial: tiktoken's \"all\" as \"all\", a list as a Set (an array throws); " +
            "allowed \"all\" with disallowed \"all\" is passed as allowedSpecial \"all\" alone (gpt-tokenizer throws on both)",
          "no encode_ordinary and no batch encode",
          "decode returns text only: decode_bytes/token_bytes read the byte table decode reads; decode(errors='strict') is unsupported",
          "decode shares one streaming TextDecoder across calls; the adapter flushes it before each decode, so each " +
            "behaves as the first in a fresh process (api-surface path decode[again] shows a second call)",
          "pretokenize runs its own split regex (tokenSplitRegex), as encode does",
        ],
      },
      vocabulary: vocabularyInfo(ctx, encoding, ranks),
    },
    encode(text, policy) {
      return api.encode(text, options(policy.allowed, policy.disallowed));
    },
    decode_bytes(ids) {
      return new Uint8Array(Buffer.concat(ids.map((id) => Buffer.from(bytesOf(id)))));
    },
    decode(ids, errors) {
      if (errors !== "replace") throw new ctx.Unsupported(`gpt-tokenizer's decode has no errors=${JSON.stringify(errors)}`);
      fresh();
      return api.decode(ids);
    },
    token_bytes(id) {
      return new Uint8Array(bytesOf(id));
    },
    pretokenize(text) {
      return Array.from(text.matchAll(core.tokenSplitRegex), (m) => m[0]);
    },
    classify,
    api_attributes() {
      const s = new Surface((op, e) => classify(op, e) || "internal-error");
      s.call("vocabularySize", "other", () => api.vocabularySize);
      s.call("specialTokens", "other", () => specials.map(([lit, id]) => `${lit}=${id}`).sort());
      return s.rows;
    },
    async api_surface(text) {
      const s = new Surface((op, e) => classify(op, e) || "internal-error");
      const encoded = {};
      for (const [label, allowed, disallowed] of policies(text, literals)) {
        const opts = options(allowed, disallowed);
        encoded[label] = s.call(`encode[${label}]`, "encode", () => api.encode(text, opts));
        s.call(`encodeGenerator[${label}]`, "encode", () => [...api.encodeGenerator(text, opts)].flat());
        s.call(`countTokens[${label}]`, "encode", () => api.countTokens(text, opts));
        // the limits are probed around a count encode gave (a negative limit is no real use)
        if (!encoded[label].ok) continue;
        const n = encoded[label].value.length;
        s.call(`isWithinTokenLimit[${label}](n)`, "encode", () => api.isWithinTokenLimit(text, n, opts));
        if (n > 0) s.call(`isWithinTokenLimit[${label}](n-1)`, "encode", () => api.isWithinTokenLimit(text, n - 1, opts));
      }
      if (chatModel) {
        const chat = [{ role: "user", content: text }];
        const ids = s.call("encodeChat[user]", "encode", () => chatModel.encodeChat(chat));
        s.call("countTokens[chat]", "encode", () => chatModel.countTokens(chat));
        if (ids.ok) s.call("isWithinTokenLimit[chat](n)", "encode", () => chatModel.isWithinTokenLimit(chat, ids.value.length));
      }
      const source = encoded.all.ok ? encoded.all : encoded.ordinary;
      if (!source.ok) return s.rows;
      const ids = source.value;
      s.call("decode_bytes", "decode", () => adapter.decode_bytes(ids));
      fresh();
      s.call("decode", "decode", () => api.decode(ids));
      s.call("decode[again]", "decode", () => api.decode(ids));
      if (partial !== undefined) {
        // a stream decoded chunk by chunk: the previous chunk ended inside a character
        fresh();
        api.decode([partial]);
        s.call("decode[after-partial]", "decode", () => api.decode(ids));
      }
      fresh();
      s.call("decodeGenerator", "decode", () => [...api.decodeGenerator(ids)].join(""));
      fresh();
      await s.callAsync("decodeAsyncGenerator", "decode", async () => {
        let out = "";
        for await (const part of api.decodeAsyncGenerator(fromArray(ids))) out += part;
        return out;
      });
      fresh();
      await s.callAsync("decodeAsync", "decode", () => api.decodeAsync(fromArray(ids)));
      fresh();
      return s.rows;
    },
    snippet(check, kind, text, policy, ids) {
      if (ids != null) return snippet(importLine, `gpt.decode(${idList(ids)})`);
      const opts = optionsText(policy.allowed, policy.disallowed);
      const surface = /^(?:inconsistent|changed):([^~:]+)/.exec(kind || "");
      const pathName = check === "api-surface" && surface ? surface[1] : "";
      const label = /\[(\w+)\]/.exec(pathName)?.[1];
      const pathOpts = label ? optionsText(...(policies(text, literals).find((p) => p[0] === label) || [[], "all"]).slice(1)) : opts;
      if (pathName.startsWith("countTokens[chat]") || pathName.startsWith("encodeChat") || pathName.startsWith("isWithinTokenLimit[chat]")) {
        const model = CHAT_MODEL[encoding];
        const chat = `[{ role: "user", content: ${jsString(text)} }]`;
        return snippet(`import * as gpt from "gpt-tokenizer/model/${model}"; // npm install gpt-tokenizer@${ctx.version}`,
          `[gpt.encodeChat(${chat}).length, gpt.countTokens(${chat}), gpt.isWithinTokenLimit(${chat}, 1e9)]`);
      }
      if (pathName.startsWith("countTokens") || pathName.startsWith("isWithinTokenLimit")) {
        const t = jsString(text);
        return snippet(importLine, `[gpt.encode(${t}${pathOpts}).length, gpt.countTokens(${t}${pathOpts}), gpt.isWithinTokenLimit(${t}, 1e9${pathOpts})]`);
      }
      if (pathName === "decode[after-partial]") {
        return snippet(importLine, `((ids) => [gpt.decode(ids), gpt.decode([${partial}]), gpt.decode(ids)])(gpt.encode(${jsString(text)}, { allowedSpecial: "all" }))`);
      }
      if (pathName.startsWith("decode")) {
        return snippet(importLine, `((ids) => [gpt.decode(ids), gpt.decode(ids), [...gpt.decodeGenerator(ids)].join("")])(gpt.encode(${jsString(text)}, { allowedSpecial: "all" }))`);
      }
      if (check === "round-trip" || check === "per-token-decode") {
        return snippet(importLine, `gpt.decode(gpt.encode(${jsString(text)}${opts}))`);
      }
      return snippet(importLine, `gpt.encode(${jsString(text)}${opts})`);
    },
  };
  return adapter;
}
