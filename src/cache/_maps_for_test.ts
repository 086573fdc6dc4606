/**
 * Mappings of `file` in this process (Linux's /proc/PID/maps, read by `cat`: Deno asks for
 * --allow-all to read /proc/self).
 */
export async function mappings(file: string): Promise<number> {
  const out = await new Deno.Command("cat", { args: [`/proc/${Deno.pid}/maps`] }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l.endsWith(file)).length;
}
