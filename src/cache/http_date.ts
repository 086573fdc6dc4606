/**
 * HTTP dates (RFC 9110 5.6.7): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two
 * obsolete forms a recipient must accept (RFC 850 and asctime). Anything else is NaN. Names
 * (days, months, `GMT`) are matched in any letter case: RFC 9110 5.6.7 has recipients accept
 * case differences (`THU, 01 DEC 1994 16:00:00 gmt`).
 */

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const LONG_DAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

const IMF = /^([a-z]{3}), (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/i;
const RFC850 = /^([a-z]+), (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/i;
const ASCTIME = /^([a-z]{3}) ([a-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

function build(
  year: number,
  month: string,
  day: number,
  h: number,
  m: number,
  s: number,
): number {
  const mi = MONTHS.indexOf(month.toLowerCase());
  if (mi < 0 || day < 1 || day > 31 || h > 23 || m > 59 || s > 60) return NaN;
  const t = Date.UTC(year, mi, day, h, m, s);
  // Reject dates such as 31 Feb that Date.UTC would roll over.
  return new Date(t).getUTCDate() === day ? t : NaN;
}

/** Milliseconds since the epoch, or NaN when `value` is not an HTTP date. */
export function parseHttpDate(value: string | null): number {
  if (value === null) return NaN;
  let v = value.trim();
  // A repeated field joined by `Headers` (`Date: a, b`): the first IMF-fixdate counts.
  if (v.length > 29 && v.charCodeAt(29) === 0x2c) v = v.slice(0, 29);
  let r = IMF.exec(v);
  if (r !== null) {
    if (!DAYS.includes(r[1].toLowerCase())) return NaN;
    return build(+r[4], r[3], +r[2], +r[5], +r[6], +r[7]);
  }
  r = RFC850.exec(v);
  if (r !== null) {
    if (!LONG_DAYS.includes(r[1].toLowerCase())) return NaN;
    // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
    let year = 2000 + +r[4];
    if (year > new Date().getUTCFullYear() + 50) year -= 100;
    return build(year, r[3], +r[2], +r[5], +r[6], +r[7]);
  }
  r = ASCTIME.exec(v);
  if (r !== null) {
    if (!DAYS.includes(r[1].toLowerCase())) return NaN;
    return build(+r[7], r[2], +r[3].trim(), +r[4], +r[5], +r[6]);
  }
  return NaN;
}

/** IMF-fixdate of `ms`. */
export function formatHttpDate(ms: number): string {
  return new Date(ms).toUTCString();
}
