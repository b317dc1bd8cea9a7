/** A position in PostgreSQL's write-ahead log, as a number (its text form is `HI/LO` in hex). */
export type Lsn = bigint;

export function lsnOf(text: string): Lsn {
  const [high = '0', low = '0'] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

export function lsnText(lsn: Lsn): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}
