/**
 * The shell that every worker runs under, so that no worker outlives scalwsd: its standard
 * input is a pipe from scalwsd that nothing is written to. When scalwsd exits, even by
 * SIGKILL, the pipe closes, the watcher's `read` ends, and the application gets SIGTERM, then
 * SIGKILL 5 s later. SIGTERM to the shell is passed on to the application; the shell exits with
 * the application's status (the shell's own "Terminated" notice is not written: it would be
 * logged as the application's output). The application's PID is written to `$SCALWS_PIDFILE`. SIGUSR1
 * (log rotation, sent to a whole process group or unit) is caught and dropped: its default
 * action would end the shell, and passed on it would open a Node or Deno application's debugger.
 * Both are caught before the application starts (a SIGTERM until then is passed on once it has):
 * a signal between its start and the traps would end the shell and leave the application
 * running with no watcher.
 */
export const WRAPPER = `
trap ':' USR1
term=
trap 'term=1' TERM INT
exec 3<&0
"$@" </dev/null 3<&- &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
[ -z "$term" ] || kill -TERM "$pid" 2>/dev/null
echo "$pid" > "$SCALWS_PIDFILE"
(
  while read -r _ <&3; do :; done
  kill -TERM "$pid" 2>/dev/null
  sleep 5
  kill -KILL "$pid" 2>/dev/null
) </dev/null >/dev/null 2>&1 &
watch=$!
exec 3<&-
status=0
wait "$pid" 2>/dev/null || status=$?
while kill -0 "$pid" 2>/dev/null; do wait "$pid" 2>/dev/null; status=$?; done
kill "$watch" 2>/dev/null
exit "$status"
`;

/** argv of the wrapper around `command`. */
export function wrapped(command: readonly string[]): string[] {
  return ["-c", WRAPPER, "scalwsd-worker", ...command];
}
