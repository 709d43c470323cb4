// The worker protocol of harness/worker/protocol.py, spoken by Node: length-prefixed
// ASCII JSON frames. That Python module's docstring is the contract; this file follows it.
//
// Text across the boundary. A JavaScript string is a sequence of UTF-16 code units, so a
// lone surrogate is an ordinary value here, as it is in a Python str. Both directions are
// exact for every string JavaScript can hold:
//
// - parent -> worker: a plain JSON string (JSON.parse turns a "\udXXX" escape into that
//   one code unit, paired or not), or {"u8": BASE64} for a Python str holding surrogate
//   code points: UTF-8 with each surrogate as its own 3-byte sequence (Python's
//   "surrogatepass", also called WTF-8 when no pair is written that way). decodeWtf8
//   below reads it by hand, since TextDecoder would turn each such sequence into U+FFFD.
//   Python's two code points U+D83D U+DE00 and its one code point U+1F600 both arrive
//   as the same two code units: JavaScript cannot tell them apart.
// - worker -> parent: JSON.stringify writes a lone surrogate as a "\udXXX" escape
//   (well-formed JSON.stringify, Node >= 12) and a pair as the character; asciiJson then
//   escapes every non-ASCII code unit, so a frame is ASCII as the contract says and Python's
//   json.loads reads back exactly these code units (a lone one stays lone, a pair joins).

import fs from "node:fs";

export const MAX_FRAME = 2 ** 30;

export class ProtocolError extends Error {}

/** Sleep without an event loop (a blocking read on a non-blocking fd got EAGAIN). */
function pause(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Read exactly n bytes from fd; null at a clean end of input before the first byte. */
export function readExactly(fd, n) {
  const buffer = Buffer.allocUnsafe(n);
  let got = 0;
  while (got < n) {
    let read;
    try {
      read = fs.readSync(fd, buffer, got, n - got, null);
    } catch (error) {
      if (error.code === "EAGAIN") {
        pause(5);
        continue;
      }
      if (error.code === "EOF") {
        read = 0;
      } else {
        throw error;
      }
    }
    if (read === 0) {
      if (got === 0) return null;
      throw new ProtocolError(`the stream ended inside a frame (${got} of ${n} bytes)`);
    }
    got += read;
  }
  return buffer;
}

/** The next message (an object with a "type"), or null at a clean end of input. */
export function readFrame(fd) {
  const header = readExactly(fd, 4);
  if (header === null) return null;
  const length = header.readUInt32BE(0);
  if (length > MAX_FRAME) {
    throw new ProtocolError(`frame length ${length} is over the ${MAX_FRAME}-byte limit`);
  }
  const payload = length === 0 ? Buffer.alloc(0) : readExactly(fd, length);
  if (payload === null) throw new ProtocolError(`the stream ended inside a frame (0 of ${length} bytes)`);
  let message;
  try {
    message = JSON.parse(payload.toString("utf8"));
  } catch (error) {
    throw new ProtocolError(`a frame is not JSON: ${error.message}`);
  }
  if (message === null || typeof message !== "object" || !("type" in message)) {
    throw new ProtocolError("a frame is not a message object with a type");
  }
  return message;
}

/** JSON text with every code unit above U+007E written as a \uXXXX escape (ASCII only). */
export function asciiJson(value) {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g,
    (unit) => "\\u" + unit.charCodeAt(0).toString(16).padStart(4, "0"));
}

export function encodeFrame(message) {
  const payload = Buffer.from(asciiJson(message), "ascii");
  if (payload.length > MAX_FRAME) {
    throw new ProtocolError(`frame of ${payload.length} bytes is over the ${MAX_FRAME}-byte limit`);
  }
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(payload.length, 0);
  return Buffer.concat([header, payload]);
}

export function writeAll(fd, data) {
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += fs.writeSync(fd, data, offset, data.length - offset);
    } catch (error) {
      if (error.code !== "EAGAIN") throw error;
      pause(5);
    }
  }
}

export function writeFrame(fd, message) {
  writeAll(fd, encodeFrame(message));
}

// -- values ---------------------------------------------------------------------------------

/**
 * UTF-8 bytes with surrogates written as their own 3-byte sequences (Python's
 * "surrogatepass") -> a string of exactly those code points as UTF-16 code units.
 */
export function decodeWtf8(bytes) {
  const units = [];
  let out = "";
  for (let i = 0; i < bytes.length;) {
    const b0 = bytes[i];
    let cp;
    let size;
    if (b0 < 0x80) {
      cp = b0;
      size = 1;
    } else if (b0 >= 0xc2 && b0 < 0xe0) {
      cp = b0 & 0x1f;
      size = 2;
    } else if (b0 >= 0xe0 && b0 < 0xf0) {
      cp = b0 & 0x0f;
      size = 3;
    } else if (b0 >= 0xf0 && b0 < 0xf5) {
      cp = b0 & 0x07;
      size = 4;
    } else {
      throw new ProtocolError(`a "u8" value has the invalid lead byte 0x${b0.toString(16)} at ${i}`);
    }
    if (i + size > bytes.length) throw new ProtocolError(`a "u8" value ends inside a sequence at ${i}`);
    for (let k = 1; k < size; k++) {
      const b = bytes[i + k];
      if ((b & 0xc0) !== 0x80) throw new ProtocolError(`a "u8" value has a bad continuation byte at ${i + k}`);
      cp = (cp << 6) | (b & 0x3f);
    }
    if ((size === 3 && cp < 0x800) || (size === 4 && (cp < 0x10000 || cp > 0x10ffff))) {
      throw new ProtocolError(`a "u8" value has an overlong or out-of-range sequence at ${i}`);
    }
    if (cp >= 0x10000) {
      const v = cp - 0x10000;
      units.push(0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
    } else {
      units.push(cp); // a surrogate code point becomes that code unit, paired or not
    }
    i += size;
    if (units.length >= 8192) {
      out += String.fromCharCode(...units);
      units.length = 0;
    }
  }
  return out + String.fromCharCode(...units);
}

/** JSON data from the parent -> a JavaScript value (the table of protocol.py, read back). */
export function decodeValue(data) {
  if (Array.isArray(data)) return data.map(decodeValue);
  if (data !== null && typeof data === "object") {
    if ("u8" in data) return decodeWtf8(Buffer.from(data.u8, "base64"));
    if ("b" in data) return new Uint8Array(Buffer.from(data.b, "base64"));
    if ("policy" in data) {
      const [allowed, disallowed] = data.policy;
      const part = (p) => (p === "all" ? "all" : p.map(decodeValue));
      return { allowed: part(allowed), disallowed: part(disallowed) };
    }
    throw new ProtocolError(`unknown tagged value ${JSON.stringify(Object.keys(data))}`);
  }
  return data;
}

/** A JavaScript value -> JSON data for the parent; a TypeError for what cannot cross. */
export function encodeValue(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) {
      throw new TypeError(`the number ${value} is not an integer the protocol carries exactly`);
    }
    return value;
  }
  if (typeof value === "bigint") {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < -BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new TypeError(`the integer ${value} is beyond 2**53`);
    }
    return Number(value);
  }
  if (value instanceof Uint8Array) return { b: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  if (ArrayBuffer.isView(value)) return Array.from(value, encodeValue); // Uint32Array of IDs
  if (Array.isArray(value)) return value.map(encodeValue);
  throw new TypeError(`${Object.prototype.toString.call(value)} cannot cross the worker protocol`);
}

/** {"ok": VALUE} or {"raised": [CATEGORY, NATIVE_TYPE, MESSAGE]}. */
export function okOutcome(value) {
  return { ok: encodeValue(value) };
}

export function raisedOutcome(category, nativeType, message) {
  return { raised: [category, nativeType, String(message)] };
}
