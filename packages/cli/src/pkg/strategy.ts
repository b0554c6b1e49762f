/** kpt's update strategies (seed 001). */
export const updateStrategies = ['resource-merge', 'fast-forward', 'force-delete-replace'] as const;
export type UpdateStrategy = (typeof updateStrategies)[number];

export function isUpdateStrategy(value: unknown): value is UpdateStrategy {
  return typeof value === 'string' && (updateStrategies as readonly string[]).includes(value);
}
