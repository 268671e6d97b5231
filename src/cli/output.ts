// Everything the CLI writes goes through here: a terminal is never given a control character, whatever
// a bot sent, whoever stored it and whenever (terminalText), in a table, Markdown, JSON or an error.
import { terminalText } from '../printable-text.js';

/** A line (or lines) on stdout. */
export const printOut = (text: string): void => console.log(terminalText(text));

/** A line (or lines) on stderr. */
export const printErr = (text: string): void => console.error(terminalText(text));
