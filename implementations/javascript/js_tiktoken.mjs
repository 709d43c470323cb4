// js-tiktoken: the pure-JavaScript port of tiktoken (npm "js-tiktoken"), used as its
// README shows: getEncoding(name) from the package's main entry for a bundled encoding,
// new Tiktoken({bpe_ranks, ...}) from "js-tiktoken/lite" over an encoding file's ranks.
//
// Its API is encode(text, allowedSpecial, disallowedSpecial) and decode(tokens) -> string.
// The policy arguments are tiktoken's, spelled the same way (an array of literals or
// "all"; defaults [] and "all"), so tiktoken's semantics map one to one. What it lacks:
// encode_ordinary (callers pass [], []), a batch encode, decoding to bytes, a strict
// decode. decode_bytes and token_bytes here read the byte table its decode joins before
// its TextDecoder (textMap, then inverseSpecialTokens, an unknown ID skipped as decode
// skips it); decode(errors="strict") is unsupported.

import fs from "node:fs";
import path from "node:path";
import { idList, idSpace, jsString, snippet, vocabularyInfo } from "./common.mjs";
import { compiledPattern, jsTiktokenRanks, specialTokens, verifiedRanks } from "./ranks.mjs";

export const library = "js-tiktoken";

export async function encodings(ctx) {
  const manifest = JSON.parse(fs.readFileSync(path.join(ctx.packageDir, "package.json"), "utf8"));
  const names = Object.keys(manifest.exports || {}).filter((k) => k.startsWith("./ranks/")).map((k) => k.slice("./ranks/".length));
  return names.sort().map((encoding) => ({ encoding, id_space: idSpace(encoding), reason: null }));
}

function policyArgs(policy) {
  return [policy.allowed, policy.disallowed];
}

function policyText(policy) {
  const part = (p) => (p === "all" ? '"all"' : JSON.stringify(p));
  return `${part(policy.allowed)}, ${part(policy.disallowed)}`;
}

/** The package's bundled encoding, or (ctx.encoding) one built from an encoding file's
 * ranks through its public constructor: `new Tiktoken({bpe_ranks, special_tokens,
 * pat_str})` from "js-tiktoken/lite" (js-tiktoken 1.0.21, dist/lite.d.ts TiktokenBPE). */
async function encoder(ctx, encoding) {
  if (!ctx.encoding) {
    const { getEncoding } = await ctx.load("js-tiktoken");
    return { enc: getEncoding(encoding), vocabulary: (enc) => vocabularyInfo(ctx, encoding, enc.textMap.entries()),
      importLine: `import { getEncoding } from "js-tiktoken"; // npm install js-tiktoken@${ctx.version}`,
      call: `getEncoding(${JSON.stringify(encoding)})` };
  }
  // its encode compiles patStr with flags "ug" on every call: fail here, once, instead
  compiledPattern(ctx, library, "ug");
  const { Tiktoken } = await ctx.load("js-tiktoken/lite");
  const { entries } = verifiedRanks(ctx);
  const enc = new Tiktoken({ bpe_ranks: jsTiktokenRanks(entries), special_tokens: specialTokens(ctx), pat_str: ctx.encoding.pattern });
  const file = ctx.encoding.ranks_file.split("/").pop();
  return { enc, vocabulary: () => [[file, ctx.encoding.sha256]],
    importLine: `import { Tiktoken } from "js-tiktoken/lite"; // npm install js-tiktoken@${ctx.version}; ` +
      `bpe_ranks: "! FIRST_RANK base64..." lines of ${file}`,
    call: `new Tiktoken({ bpe_ranks, special_tokens, pat_str: ${jsString(ctx.encoding.pattern)} })` };
}

export async function build(ctx, encoding) {
  const { enc, vocabulary, importLine, call } = await encoder(ctx, encoding);
  const specials = Object.entries(enc.specialTokens);
  const textMap = enc.textMap; // rank -> bytes, what decode joins
  const inverse = enc.inverseSpecialTokens;
  const pattern = new RegExp(enc.patStr, "ug");
  const bytesOf = (id) => textMap.get(id) ?? inverse[id];
  return {
    info: {
      encoding: idSpace(encoding),
      special_tokens: specials,
      capabilities: {
        special_policy: "tiktoken",
        encode_ordinary: false,
        pretokenize: true,
        // declared, never timed (issue 20): its merge loop is quadratic on one piece; one
        // encode of 10,000 letters took 6 s and of 10,000 CJK characters over 30 s, of
        // 100,000 letters, spaces or CJK over 30 s (o200k_base and cl100k_base, 2-core
        // machine at load 2, 2026-12-02)
        long_limit: 1000,
        notes: [
          "allowedSpecial/disallowedSpecial take tiktoken's values (an array of literals or \"all\") with tiktoken's meaning",
          "no encode_ordinary: encode(text, [], []) is its ordinary encode; no batch encode",
          "decode returns text only (a TextDecoder): decode_bytes/token_bytes read the byte table decode joins, " +
            "where an unknown ID is skipped as decode skips it; decode(errors='strict') is unsupported",
          "pretokenize runs its own pattern (patStr) with the JavaScript RegExp engine, flags 'ug', as encode does",
        ],
      },
      vocabulary: vocabulary(enc),
    },
    encode(text, policy) {
      return enc.encode(text, ...policyArgs(policy));
    },
    decode_bytes(ids) {
      const parts = ids.map(bytesOf).filter((b) => b != null);
      return new Uint8Array(Buffer.concat(parts.map((b) => Buffer.from(b))));
    },
    decode(ids, errors) {
      if (errors !== "replace") throw new ctx.Unsupported(`js-tiktoken's decode has no errors=${JSON.stringify(errors)}`);
      return enc.decode(ids);
    },
    token_bytes(id) {
      const bytes = bytesOf(id);
      if (bytes == null) throw new RangeError(`js-tiktoken has no token ${id}`);
      return new Uint8Array(bytes);
    },
    pretokenize(text) {
      return Array.from(text.matchAll(pattern), (m) => m[0]);
    },
    classify(op, error) {
      return op === "token_bytes" && error instanceof RangeError ? "unknown-id" : null;
    },
    snippet(check, kind, text, policy, ids) {
      if (ids != null) return snippet(importLine, `${call}.decode(${idList(ids)})`);
      if (check === "round-trip" || check === "per-token-decode") {
        return snippet(importLine, `((e) => e.decode(e.encode(${jsString(text)}, ${policyText(policy)})))(${call})`);
      }
      return snippet(importLine, `${call}.encode(${jsString(text)}, ${policyText(policy)})`);
    },
  };
}
