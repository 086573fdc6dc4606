/**
 * Active health of one member: a pure rise/fall counter. A member starts up; `fall`
 * consecutive failed results take it down and `rise` consecutive passes bring it back. Probe
 * results feed it, and so do connect failures of live requests (`record(false, ...)`), so a dead
 * member drops out between probes; `lastProbeAt` and `lastResult` then describe that failure.
 */
export class ActiveHealthState {
  /** True while the member may take traffic as far as active checks go. */
  up = true;
  /** Consecutive passes (reset by a failure). */
  passes = 0;
  /** Consecutive failures (reset by a pass). */
  fails = 0;
  /** Time of the latest result, 0 before the first. */
  lastProbeAt = 0;
  /** The latest result; undefined before the first. */
  lastResult: boolean | undefined = undefined;

  /** Counts one result at `now`. Returns true when `up` flipped. */
  record(ok: boolean, now: number, rise: number, fall: number): boolean {
    this.lastProbeAt = now;
    this.lastResult = ok;
    if (ok) {
      this.fails = 0;
      this.passes++;
      if (!this.up && this.passes >= rise) {
        this.up = true;
        return true;
      }
      return false;
    }
    this.passes = 0;
    this.fails++;
    if (this.up && this.fails >= fall) {
      this.up = false;
      return true;
    }
    return false;
  }
}
