const TEXT = { "content-type": "text/plain; charset=utf-8" };

/** A short plain-text answer from scalwsd itself (errors, 503 of an empty pool, ...). */
export function plain(status: number, text: string, extra?: Record<string, string>): Response {
  return new Response(text + "\n", { status, headers: extra ? { ...TEXT, ...extra } : TEXT });
}
