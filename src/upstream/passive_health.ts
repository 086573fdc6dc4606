/**
 * Passive health of one member, as a pure state machine with time passed in: `failures`
 * consecutive failures eject the member for `cooldown`; after the cooldown it is on probation,
 * where the next success restores it fully and the next failure ejects it again at once. Results
 * of attempts begun before the latest ejection (an older epoch) are ignored, so an ejection is
 * never extended or ended by requests that were already in flight. `failures: 0` never ejects.
 */

/** The pool's `passive_health` settings (milliseconds). */
export interface PassiveSettings {
  /** Consecutive failures that eject; 0 turns ejection off. */
  readonly failures: number;
  /** How long an ejection lasts. */
  readonly cooldown: number;
}

/** Health state of one member, fed with the results of its attempts. */
export class PassiveHealth {
  /** Consecutive failures counted since the last success. */
  failures = 0;
  /** End of the current ejection; 0 when the member is not ejected nor on probation. */
  ejectedUntil = 0;
  /** When the latest ejection began (for picking the member ejected longest ago). */
  ejectedAt = 0;
  /** Set by an ejection, cleared by the success that restores the member. */
  probation = false;
  /** Bumped by every ejection; attempts carry the epoch they began in. */
  epoch = 0;

  /** The epoch to stamp on an attempt that starts now. */
  begin(): number {
    return this.epoch;
  }

  /** True while the member is ejected (not yet on probation). */
  isEjected(now: number): boolean {
    return now < this.ejectedUntil;
  }

  /** True after the cooldown, until the next result decides. */
  onProbation(now: number): boolean {
    return this.probation && now >= this.ejectedUntil;
  }

  /**
   * Records a success of an attempt begun in `epoch`. Returns true when it restored the member
   * (it was ejected, tried anyway because every member was, or on probation).
   */
  success(epoch: number, _now: number): boolean {
    if (epoch !== this.epoch) return false;
    this.failures = 0;
    if (!this.probation) return false;
    this.probation = false;
    this.ejectedUntil = 0;
    return true;
  }

  /**
   * Records a failure of an attempt begun in `epoch`. Returns true when it ejected the member
   * (from healthy, or from probation). A failure while the member is still ejected (it was
   * tried because every member was) only counts: the ejection runs its course unchanged, so
   * `ejectedUntil` changes only when this returns true.
   */
  failure(epoch: number, now: number, settings: PassiveSettings): boolean {
    if (epoch !== this.epoch) return false;
    this.failures++;
    if (settings.failures <= 0) return false;
    if (this.probation) {
      if (now < this.ejectedUntil) return false;
      this.#eject(now, settings.cooldown);
      return true;
    }
    if (this.failures < settings.failures) return false;
    this.#eject(now, settings.cooldown);
    return true;
  }

  #eject(now: number, cooldown: number): void {
    this.probation = true;
    this.ejectedAt = now;
    this.ejectedUntil = now + cooldown;
    this.epoch++;
  }
}

/** What `pickLongestEjected` needs of a member. */
export interface HasPassiveHealth {
  readonly health: PassiveHealth;
}

/**
 * When every member is ejected: the untried member ejected longest ago (smallest `ejectedAt`,
 * the first in list order on ties), so passive health alone never refuses traffic. Members
 * never ejected or already restored are not considered; undefined when none is left.
 */
export function pickLongestEjected<M extends HasPassiveHealth>(
  members: readonly M[],
  tried: ReadonlySet<unknown> | null,
): M | undefined {
  let best: M | undefined;
  for (let i = 0; i < members.length; i++) {
    const m = members[i];
    const h = m.health;
    if (!h.probation || (tried !== null && tried.has(m))) continue;
    if (best === undefined || h.ejectedAt < best.health.ejectedAt) best = m;
  }
  return best;
}
