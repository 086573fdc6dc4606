/** The `server.limits` checks on a parsed head, with today's statuses (414, then 431). */

import type { RequestHead } from "./parse_request_head.ts";

/** The limits of one generation; 0 turns a check off. */
export interface HeadLimits {
  /** Bytes of path and query (`max_uri_length`): 414 above. */
  readonly maxUri: number;
  /** Header fields (`max_header_count`; a repeated name counts once, as over HTTP/2): 431 above. */
  readonly maxHeaderCount: number;
  /** Bytes of field lines, name + value + 4 each (`max_header_size`): 431 above. */
  readonly maxHeaderSize: number;
}

/** 414, 431, or 0 when `head` is within `limits`. */
export function headLimitStatus(head: RequestHead, limits: HeadLimits): number {
  if (limits.maxUri > 0 && head.target.length > limits.maxUri) return 414;
  if (
    limits.maxHeaderCount > 0 && head.fieldCount > limits.maxHeaderCount &&
    distinctNames(head) > limits.maxHeaderCount
  ) return 431;
  if (limits.maxHeaderSize > 0 && head.fieldBytes > limits.maxHeaderSize) return 431;
  return 0;
}

/** Distinct field names of `head` (only asked when its lines are over the count). */
function distinctNames(head: RequestHead): number {
  const names = new Set<string>();
  const f = head.fields;
  for (let i = 0; i < f.length; i += 2) names.add(f[i]);
  return names.size;
}
