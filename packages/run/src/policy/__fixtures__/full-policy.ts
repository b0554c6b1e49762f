/** The design's example of an UpdatePolicy's `spec`, every field set (docs/update-policy.md shows it too). */
export const FULL_POLICY_SPEC = `selector:
  packageVariantSets: [basens-fleet]
  packageVariants: ["web-*"]
  upstream: {repo: blueprints, package: basens}
  downstreamLabels: {env: prod}
updateTypes: [patch, minor]
ignore: ["v1.4.0", "v2.*"]
minimumReleaseAge: 3d
separateMajor: true
schedule:
  timeZone: Europe/Berlin
  windows: ["Mon-Fri 09:00-17:00", "Sat 10:00-12:00", "cron: * 9-16 * * 1-5"]
freezes:
  - from: 2026-12-20
    until: 2027-01-04T00:00:00Z
    reason: year-end freeze
limits:
  openProposals: 10
  perHour: 5
group: repository
autoMerge:
  updateTypes: [patch]
  upstreams: [blueprints]
rollout:
  label: kdelta.dev/wave
  waves: [canary, early, prod]
  soak: 2h
  health:
    name: flux-system
    kind: any
  halted:
    - {revision: v1.5.0, reason: paging alert on canary}
  advanced:
    - {revision: v1.5.0, wave: early}`;
