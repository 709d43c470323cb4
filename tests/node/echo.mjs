// A JavaScript test adapter for tests/test_node_worker.py: it shows what crossed the
// protocol, code unit by code unit, and misbehaves on request.
//
// encode(text)      -> the UTF-16 code units of the text as it arrived (IDs)
// decode(ids)       -> the string of those code units (lone surrogates included)
// pretokenize(text) -> [text], returned as it arrived
// decode_bytes(ids) -> the IDs as bytes (each & 0xff)
// token_bytes(id)   -> one byte
// Text starting with "!hang" never returns, "!exit" ends the process, "!throw" throws a
// TypeError, "!oom" allocates until the heap limit, "!print" writes to stdout first.

export const library = "tokconf-echo";

export async function encodings() {
  return [{ encoding: "test", id_space: "echo", reason: null }];
}

export async function build(ctx, encoding) {
  return {
    info: {
      encoding: "echo",
      special_tokens: [["<|e|>", 70000]],
      capabilities: { special_policy: "none", notes: ["a test adapter"] },
      vocabulary: [["echo.tiktoken", ctx.sha256(Buffer.from("echo"))]],
    },
    encode(text, policy) {
      if (text.startsWith("!hang")) for (;;) {}
      if (text.startsWith("!exit")) process.exit(3);
      if (text.startsWith("!throw")) null.x;
      if (text.startsWith("!oom")) { const keep = []; for (;;) keep.push(new Array(1e6).fill(1.5)); }
      if (text.startsWith("!print")) console.log("noise on stdout");
      if (text.startsWith("!float")) return [1.5];
      const units = [];
      for (let i = 0; i < text.length; i++) units.push(text.charCodeAt(i));
      return units;
    },
    decode(ids, errors) {
      let out = "";
      for (let i = 0; i < ids.length; i += 8192) out += String.fromCharCode(...ids.slice(i, i + 8192));
      return out;
    },
    decode_bytes(ids) {
      return new Uint8Array(ids.map((i) => i & 0xff));
    },
    token_bytes(id) {
      if (id > 0xffff) throw new RangeError(`no token ${id}`);
      return new Uint8Array([id & 0xff]);
    },
    pretokenize(text) {
      return [text];
    },
    classify(op, error) {
      return error instanceof RangeError && op === "token_bytes" ? "unknown-id" : null;
    },
  };
}
