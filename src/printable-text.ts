// Free text that a person reads back (an audit reason, a note of an operator's action): no control characters; and any text as a terminal may be given it.
import { z } from 'zod';

/**
 * C0 controls (U+0000-U+001F: NUL, a line break, ESC), DEL and the C1 controls (U+007F-U+009F). In a
 * line printed at a terminal, a line break starts a row the writer made up and ESC starts a sequence
 * that moves the cursor or recolours the screen: a reason holding them could forge what the CLI's
 * audit table shows. None belongs in a one-line note, so none is taken, tab and newline included.
 */
const isControl = (code: number): boolean => code <= 0x1f || (code >= 0x7f && code <= 0x9f);

/** Whether `text` holds a control character. */
export function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (isControl(text.charCodeAt(i))) return true;
  return false;
}

export const CONTROL_CHARACTER_MESSAGE =
  'must not hold control characters (U+0000-U+001F, U+007F-U+009F): a line break or an escape sequence would change what is printed';

/** A string schema that refuses control characters: the one rule for printed free text, everywhere it is taken. */
export const printableText = () =>
  z.string().refine((value) => !hasControlCharacter(value), { message: CONTROL_CHARACTER_MESSAGE });

/**
 * What a terminal is given of stored text: each control character written as its escape (`\n`,
 * `\u001b`), so a row stored before the rule, or by another way in, cannot forge output.
 */
export function escapeControls(text: string): string {
  if (!hasControlCharacter(text)) return text;
  let out = '';
  for (const c of text) {
    const code = c.charCodeAt(0);
    if (!isControl(code)) out += c;
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else out += `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return out;
}

/**
 * What a terminal may be given of any text: every character that acts on a terminal or reorders what
 * it shows written as its JSON escape (`\u001b`), line feeds kept. That is each C0 control but the line
 * feed (the tab too), DEL, the C1 controls (U+0080-U+009F: a terminal takes U+009B as the start of a
 * sequence, as ESC [), the bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069) and the line and paragraph separators (U+2028, U+2029). The escape is JSON's own, so
 * JSON text keeps its meaning through it.
 */
const terminalUnsafe = (code: number): boolean =>
  (isControl(code) && code !== 0x0a) ||
  code === 0x061c ||
  code === 0x200e ||
  code === 0x200f ||
  (code >= 0x2028 && code <= 0x202e) ||
  (code >= 0x2066 && code <= 0x2069);

export function terminalText(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!terminalUnsafe(code)) continue;
    out += `${text.slice(from, i)}\\u${code.toString(16).padStart(4, '0')}`;
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}
