/**
 * Freezes an object graph in place and returns it. An object that is already frozen is taken
 * to be frozen deeply (as `validateMembers` leaves its members) and is not walked again.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) {
    deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
