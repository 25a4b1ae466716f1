// What a config file that is not JSON is told with: where it stops being JSON, quoting nothing of
// it but the one character at fault (the file holds secrets).
import { describe, expect, it } from 'vitest';
import { jsonSyntaxError } from '../../src/config/json-syntax.js';

describe('jsonSyntaxError', () => {
  it.each([
    ['{ "sources": [', 'Unexpected end of JSON input'],
    ['', 'Unexpected end of JSON input'],
    ['{ "a": "unterminated', 'Unexpected end of JSON input'],
    ['{ "adminToken": s3cret-admin-token }', "Unexpected token 's' at line 1, column 17"],
    ['{\n  "a": 1,\n  "b": x\n}', "Unexpected token 'x' at line 3, column 8"],
    ['{"a":1,}', "Unexpected token '}' at line 1, column 8"],
    ['{"a" 1}', "Unexpected token '1' at line 1, column 6"],
    ['[1 2]', "Unexpected token '2' at line 1, column 4"],
    ['{"a":"x\ny"}', 'Unexpected token U+000A at line 1, column 8'],
    ['{} x', "Unexpected token 'x' at line 1, column 4"],
    ['{"a":01}', "Unexpected token '1' at line 1, column 7"],
    ['{"a":-}', "Unexpected token '}' at line 1, column 7"],
    ['{"a":1.}', "Unexpected token '}' at line 1, column 8"],
    ['{"a":tru}', "Unexpected token '}' at line 1, column 9"],
    ['{"a":"\\q"}', "Unexpected token 'q' at line 1, column 8"],
    ['["\\u12"]', "Unexpected token '1' at line 1, column 5"],
    ["{'a':1}", "Unexpected token ''' at line 1, column 2"],
  ])('%j: %s, as JSON.parse refuses it', (text, message) => {
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(jsonSyntaxError(text)).toBe(message);
  });

  it('finds nothing wrong with what JSON.parse takes', () => {
    for (const text of ['{"a":[1,2,{"b":null}],"c":"\\u00e9\\n\\"","d":-1.5e+3,"e":true,"f":false,"g":0.25E-2}', ' [] ', '"x"', '0', '{ }']) {
      expect(JSON.parse(text)).toBeDefined();
      expect(jsonSyntaxError(text)).toBeUndefined();
    }
  });
});
