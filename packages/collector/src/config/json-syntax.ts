/** Thrown inside {@link jsonSyntaxError} at the offset where the text stops being JSON. */
class Stop {
  constructor(readonly at: number) {}
}

const WHITESPACE = ' \t\n\r';
const ESCAPES = '"\\/bfnrt';
const HEX = /^[0-9a-fA-F]{4}$/;

/**
 * What is wrong with `text` as JSON (RFC 8259), in words that quote none of it but the one character
 * at fault: `Unexpected end of JSON input`, or `Unexpected token 's' at line 1, column 17`. For a
 * config file, whose text holds secrets. V8's own message quotes the text around the fault, and its
 * wording changes between versions.
 * @returns undefined when `text` is JSON, or too deeply nested to tell.
 */
export function jsonSyntaxError(text: string): string | undefined {
  let at: number;
  try {
    at = stopOf(text);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
  if (at < 0) return undefined;
  if (at >= text.length) return 'Unexpected end of JSON input';
  const before = text.slice(0, at).split('\n');
  const code = text.codePointAt(at)!;
  const shown = code < 0x20 || code === 0x7f ? `U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `'${String.fromCodePoint(code)}'`;
  return `Unexpected token ${shown} at line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/** The offset of the first character that cannot continue JSON (`text.length` when it ends early); -1 when it is JSON. */
function stopOf(text: string): number {
  let i = 0;
  const stop = (): never => {
    throw new Stop(i);
  };
  const skipWhitespace = () => {
    while (i < text.length && WHITESPACE.includes(text[i]!)) i += 1;
  };
  const take = (char: string) => {
    if (text[i] !== char) stop();
    i += 1;
  };
  const digits = () => {
    const start = i;
    while (text[i]! >= '0' && text[i]! <= '9') i += 1;
    if (i === start) stop();
  };
  const string = () => {
    take('"');
    for (;;) {
      const char = text[i];
      if (char === undefined || char < ' ') stop();
      i += 1;
      if (char === '"') return;
      if (char !== '\\') continue;
      if (text[i] === 'u') {
        i += 1;
        if (!HEX.test(text.slice(i, i + 4))) stop();
        i += 4;
      } else if (text[i] !== undefined && ESCAPES.includes(text[i]!)) i += 1;
      else stop();
    }
  };
  const number = () => {
    if (text[i] === '-') i += 1;
    if (text[i] === '0') i += 1;
    else digits();
    if (text[i] === '.') {
      i += 1;
      digits();
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i += 1;
      if (text[i] === '+' || text[i] === '-') i += 1;
      digits();
    }
  };
  const word = (literal: string) => {
    for (const char of literal) take(char);
  };
  /** A list between `open` and `close` of what `item` reads, separated by commas. */
  const list = (open: string, close: string, item: () => void) => {
    take(open);
    skipWhitespace();
    if (text[i] === close) {
      i += 1;
      return;
    }
    for (;;) {
      skipWhitespace();
      item();
      skipWhitespace();
      if (text[i] !== ',') return take(close);
      i += 1;
    }
  };
  const value = (): void => {
    skipWhitespace();
    const char = text[i];
    if (char === '{') {
      return list('{', '}', () => {
        string();
        skipWhitespace();
        take(':');
        value();
      });
    }
    if (char === '[') return list('[', ']', value);
    if (char === '"') return string();
    if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) return number();
    if (char === 't') return word('true');
    if (char === 'f') return word('false');
    if (char === 'n') return word('null');
    stop();
  };
  try {
    value();
    skipWhitespace();
    if (i < text.length) stop();
    return -1;
  } catch (error) {
    if (error instanceof Stop) return error.at;
    throw error;
  }
}
