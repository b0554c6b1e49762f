// Response objects shaped like GitHub's (every field its OpenAPI schema requires), built from the fake's state.

export interface Urls {
  /** http://127.0.0.1:PORT */
  readonly server: string;
  /** http://127.0.0.1:PORT/api/v3 */
  readonly api: string;
}

export interface RepoState {
  readonly id: number;
  readonly owner: string;
  readonly name: string;
  readonly fullName: string;
  readonly nodeId: string;
  readonly defaultBranch: string;
  readonly gitDir: string;
  readonly createdAt: string;
  pushedAt: string;
}

export interface LabelState {
  readonly id: number;
  readonly name: string;
  readonly color: string;
}

export interface PullState {
  readonly id: number;
  readonly number: number;
  readonly nodeId: string;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  draft: boolean;
  merged: boolean;
  mergedAt: string | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  closedAt: string | null;
  readonly createdAt: string;
  updatedAt: string;
  readonly user: string;
  readonly head: { ref: string };
  base: { ref: string };
  /** The head and base commits last seen (kept when a branch is deleted). */
  headSha: string;
  baseSha: string;
  maintainerCanModify: boolean;
  labels: string[];
  assignees: string[];
  requestedReviewers: string[];
  requestedTeams: string[];
  autoMerge: null | { mergeMethod: 'merge' | 'squash' | 'rebase'; enabledBy: string; commitTitle: string; commitMessage: string };
}

/** An issue (not a pull request: those are PullState, numbered in the same sequence). */
export interface IssueState {
  readonly id: number;
  readonly number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  stateReason: 'completed' | 'not_planned' | 'reopened' | null;
  closedAt: string | null;
  readonly createdAt: string;
  updatedAt: string;
  readonly user: string;
  labels: string[];
}

/** A comment on an issue or a pull request (GitHub keeps a pull request's conversation as its issue's). */
export interface CommentState {
  readonly id: number;
  readonly issueNumber: number;
  body: string;
  readonly user: string;
  readonly createdAt: string;
  updatedAt: string;
}

export interface StatusState {
  readonly id: number;
  readonly state: 'error' | 'failure' | 'pending' | 'success';
  readonly context: string;
  readonly description: string | null;
  readonly targetUrl: string | null;
  readonly creator: string;
  readonly createdAt: string;
}

/** A check run, as a GitHub App (or a test, as one) posts it. */
export interface CheckRunState {
  readonly id: number;
  readonly name: string;
  readonly headSha: string;
  readonly status: 'queued' | 'in_progress' | 'completed';
  readonly conclusion: string | null;
  readonly detailsUrl: string | null;
  readonly title: string | null;
  readonly summary: string | null;
  readonly startedAt: string;
  readonly completedAt: string | null;
}

export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A stable small number for a name (ids of users, labels). */
export function idOf(name: string): number {
  let h = 7;
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) % 2_000_000_000;
  return h + 1;
}

export function nodeId(prefix: string, id: number): string {
  return prefix + '_kwDO' + Buffer.from(`fake:${id}`).toString('base64url');
}

export function user(urls: Urls, login: string) {
  // as GitHub writes a bot's: `/users/name%5Bbot%5D`
  const api = `${urls.api}/users/${encodeURIComponent(login)}`;
  const isBot = login.endsWith('[bot]');
  return {
    login,
    id: idOf(login),
    node_id: nodeId(isBot ? 'BOT' : 'U', idOf(login)),
    avatar_url: `${urls.server}/avatars/${encodeURIComponent(login)}`,
    gravatar_id: '',
    url: api,
    html_url: `${urls.server}/${encodeURIComponent(login)}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: isBot ? 'Bot' : 'User',
    site_admin: false,
  };
}

export function team(urls: Urls, org: string, slug: string) {
  const id = idOf(`${org}/${slug}`);
  return {
    id,
    node_id: nodeId('T', id),
    url: `${urls.api}/organizations/1/team/${id}`,
    members_url: `${urls.api}/organizations/1/team/${id}/members{/member}`,
    name: slug,
    description: null,
    permission: 'pull',
    privacy: 'closed',
    notification_setting: 'notifications_enabled',
    html_url: `${urls.server}/orgs/${org}/teams/${slug}`,
    repositories_url: `${urls.api}/organizations/1/team/${id}/repos`,
    slug,
    type: 'organization',
    parent: null,
  };
}

function repoUrls(urls: Urls, repo: RepoState) {
  const a = `${urls.api}/repos/${repo.fullName}`;
  return {
    id: repo.id,
    node_id: repo.nodeId,
    name: repo.name,
    full_name: repo.fullName,
    owner: user(urls, repo.owner),
    private: true,
    html_url: `${urls.server}/${repo.fullName}`,
    description: null,
    fork: false,
    url: a,
    archive_url: `${a}/{archive_format}{/ref}`,
    assignees_url: `${a}/assignees{/user}`,
    blobs_url: `${a}/git/blobs{/sha}`,
    branches_url: `${a}/branches{/branch}`,
    collaborators_url: `${a}/collaborators{/collaborator}`,
    comments_url: `${a}/comments{/number}`,
    commits_url: `${a}/commits{/sha}`,
    compare_url: `${a}/compare/{base}...{head}`,
    contents_url: `${a}/contents/{+path}`,
    contributors_url: `${a}/contributors`,
    deployments_url: `${a}/deployments`,
    downloads_url: `${a}/downloads`,
    events_url: `${a}/events`,
    forks_url: `${a}/forks`,
    git_commits_url: `${a}/git/commits{/sha}`,
    git_refs_url: `${a}/git/refs{/sha}`,
    git_tags_url: `${a}/git/tags{/sha}`,
    hooks_url: `${a}/hooks`,
    issue_comment_url: `${a}/issues/comments{/number}`,
    issue_events_url: `${a}/issues/events{/number}`,
    issues_url: `${a}/issues{/number}`,
    keys_url: `${a}/keys{/key_id}`,
    labels_url: `${a}/labels{/name}`,
    languages_url: `${a}/languages`,
    merges_url: `${a}/merges`,
    milestones_url: `${a}/milestones{/number}`,
    notifications_url: `${a}/notifications{?since,all,participating}`,
    pulls_url: `${a}/pulls{/number}`,
    releases_url: `${a}/releases{/id}`,
    stargazers_url: `${a}/stargazers`,
    statuses_url: `${a}/statuses/{sha}`,
    subscribers_url: `${a}/subscribers`,
    subscription_url: `${a}/subscription`,
    tags_url: `${a}/tags`,
    teams_url: `${a}/teams`,
    trees_url: `${a}/git/trees{/sha}`,
  };
}

/** `minimal-repository` (combined status). */
export function minimalRepository(urls: Urls, repo: RepoState) {
  return repoUrls(urls, repo);
}

/** `repository` (PR head/base) and, with the extra fields, `full-repository` (GET /repos/{owner}/{repo}). */
export function repository(urls: Urls, repo: RepoState) {
  return {
    ...repoUrls(urls, repo),
    clone_url: `${urls.server}/${repo.fullName}.git`,
    git_url: `${urls.server.replace(/^http/, 'git')}/${repo.fullName}.git`,
    ssh_url: `git@127.0.0.1:${repo.fullName}.git`,
    svn_url: `${urls.server}/${repo.fullName}`,
    mirror_url: null,
    homepage: null,
    language: null,
    forks: 0,
    forks_count: 0,
    stargazers_count: 0,
    watchers_count: 0,
    watchers: 0,
    size: 0,
    default_branch: repo.defaultBranch,
    open_issues: 0,
    open_issues_count: 0,
    is_template: false,
    topics: [],
    has_issues: true,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_downloads: true,
    has_discussions: false,
    archived: false,
    disabled: false,
    visibility: 'private',
    pushed_at: repo.pushedAt,
    created_at: repo.createdAt,
    updated_at: repo.pushedAt,
    permissions: { admin: false, maintain: false, push: true, triage: true, pull: true },
    allow_rebase_merge: true,
    allow_squash_merge: true,
    allow_merge_commit: true,
    allow_auto_merge: true,
    delete_branch_on_merge: false,
    allow_update_branch: false,
    allow_forking: false,
    web_commit_signoff_required: false,
    license: null,
  };
}

export function fullRepository(urls: Urls, repo: RepoState) {
  return { ...repository(urls, repo), network_count: 0, subscribers_count: 0 };
}

export function label(urls: Urls, repo: RepoState, l: LabelState) {
  return {
    id: l.id,
    node_id: nodeId('LA', l.id),
    url: `${urls.api}/repos/${repo.fullName}/labels/${encodeURIComponent(l.name)}`,
    name: l.name,
    // pull-request-simple types it as a non-null string.
    description: '',
    color: l.color,
    default: false,
  };
}

function link(href: string) {
  return { href };
}

/** `pull-request-simple` (list, request_reviewers). */
export function pullSimple(urls: Urls, repo: RepoState, pr: PullState, labels: (name: string) => LabelState) {
  const a = `${urls.api}/repos/${repo.fullName}`;
  const html = `${urls.server}/${repo.fullName}/pull/${pr.number}`;
  const repoObj = repository(urls, repo);
  const owner = user(urls, repo.owner);
  return {
    url: `${a}/pulls/${pr.number}`,
    id: pr.id,
    node_id: pr.nodeId,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: `${a}/issues/${pr.number}`,
    commits_url: `${a}/pulls/${pr.number}/commits`,
    review_comments_url: `${a}/pulls/${pr.number}/comments`,
    review_comment_url: `${a}/pulls/comments{/number}`,
    comments_url: `${a}/issues/${pr.number}/comments`,
    statuses_url: `${a}/statuses/${pr.headSha}`,
    number: pr.number,
    state: pr.state,
    locked: false,
    title: pr.title,
    user: user(urls, pr.user),
    body: pr.body,
    labels: pr.labels.map((n) => label(urls, repo, labels(n))),
    milestone: null,
    active_lock_reason: null,
    created_at: pr.createdAt,
    updated_at: pr.updatedAt,
    closed_at: pr.closedAt,
    merged_at: pr.mergedAt,
    merge_commit_sha: pr.mergeCommitSha,
    assignee: pr.assignees[0] ? user(urls, pr.assignees[0]) : null,
    assignees: pr.assignees.map((l) => user(urls, l)),
    requested_reviewers: pr.requestedReviewers.map((l) => user(urls, l)),
    requested_teams: pr.requestedTeams.map((t) => team(urls, repo.owner, t)),
    head: { label: `${repo.owner}:${pr.head.ref}`, ref: pr.head.ref, sha: pr.headSha, user: owner, repo: repoObj },
    base: { label: `${repo.owner}:${pr.base.ref}`, ref: pr.base.ref, sha: pr.baseSha, user: owner, repo: repoObj },
    _links: {
      self: link(`${a}/pulls/${pr.number}`),
      html: link(html),
      issue: link(`${a}/issues/${pr.number}`),
      comments: link(`${a}/issues/${pr.number}/comments`),
      review_comments: link(`${a}/pulls/${pr.number}/comments`),
      review_comment: link(`${a}/pulls/comments{/number}`),
      commits: link(`${a}/pulls/${pr.number}/commits`),
      statuses: link(`${a}/statuses/${pr.headSha}`),
    },
    author_association: 'MEMBER',
    auto_merge: pr.autoMerge
      ? {
          enabled_by: user(urls, pr.autoMerge.enabledBy),
          merge_method: pr.autoMerge.mergeMethod,
          commit_title: pr.autoMerge.commitTitle,
          commit_message: pr.autoMerge.commitMessage,
        }
      : null,
    draft: pr.draft,
  };
}

/** `pull-request` (create, get, update). */
export function pullFull(
  urls: Urls,
  repo: RepoState,
  pr: PullState,
  labels: (name: string) => LabelState,
  extra: { commits: number; additions: number; deletions: number; changedFiles: number; mergeable: boolean | null },
) {
  return {
    ...pullSimple(urls, repo, pr, labels),
    merged: pr.merged,
    mergeable: pr.state === 'open' ? extra.mergeable : null,
    rebaseable: pr.state === 'open' ? extra.mergeable : null,
    mergeable_state: pr.state !== 'open' ? 'unknown' : extra.mergeable === false ? 'dirty' : pr.draft ? 'draft' : 'clean',
    merged_by: pr.mergedBy ? user(urls, pr.mergedBy) : null,
    comments: 0,
    review_comments: 0,
    maintainer_can_modify: pr.maintainerCanModify,
    commits: extra.commits,
    additions: extra.additions,
    deletions: extra.deletions,
    changed_files: extra.changedFiles,
  };
}

/** `issue` (assignees endpoints answer with the PR's issue). */
export function issue(urls: Urls, repo: RepoState, pr: PullState, labels: (name: string) => LabelState) {
  const a = `${urls.api}/repos/${repo.fullName}`;
  return {
    id: pr.id + 500_000_000,
    node_id: nodeId('PR', pr.id),
    url: `${a}/issues/${pr.number}`,
    repository_url: a,
    labels_url: `${a}/issues/${pr.number}/labels{/name}`,
    comments_url: `${a}/issues/${pr.number}/comments`,
    events_url: `${a}/issues/${pr.number}/events`,
    html_url: `${urls.server}/${repo.fullName}/pull/${pr.number}`,
    number: pr.number,
    state: pr.state,
    state_reason: null,
    title: pr.title,
    body: pr.body,
    user: user(urls, pr.user),
    labels: pr.labels.map((n) => label(urls, repo, labels(n))),
    assignee: pr.assignees[0] ? user(urls, pr.assignees[0]) : null,
    assignees: pr.assignees.map((l) => user(urls, l)),
    milestone: null,
    locked: false,
    active_lock_reason: null,
    comments: 0,
    pull_request: {
      url: `${a}/pulls/${pr.number}`,
      html_url: `${urls.server}/${repo.fullName}/pull/${pr.number}`,
      diff_url: `${urls.server}/${repo.fullName}/pull/${pr.number}.diff`,
      patch_url: `${urls.server}/${repo.fullName}/pull/${pr.number}.patch`,
      merged_at: pr.mergedAt,
    },
    closed_at: pr.closedAt,
    created_at: pr.createdAt,
    updated_at: pr.updatedAt,
    draft: pr.draft,
    author_association: 'MEMBER',
  };
}

/** An issue as the issues endpoints give it (no `pull_request` field: that marks a pull request). */
export function plainIssue(urls: Urls, repo: RepoState, i: IssueState, labels: (name: string) => LabelState) {
  const a = `${urls.api}/repos/${repo.fullName}`;
  return {
    id: i.id,
    node_id: nodeId('I', i.id),
    url: `${a}/issues/${i.number}`,
    repository_url: a,
    labels_url: `${a}/issues/${i.number}/labels{/name}`,
    comments_url: `${a}/issues/${i.number}/comments`,
    events_url: `${a}/issues/${i.number}/events`,
    html_url: `${urls.server}/${repo.fullName}/issues/${i.number}`,
    number: i.number,
    state: i.state,
    state_reason: i.stateReason,
    title: i.title,
    body: i.body,
    user: user(urls, i.user),
    labels: i.labels.map((n) => label(urls, repo, labels(n))),
    assignee: null,
    assignees: [],
    milestone: null,
    locked: false,
    active_lock_reason: null,
    comments: 0,
    closed_at: i.closedAt,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    author_association: 'MEMBER',
  };
}

export function comment(urls: Urls, repo: RepoState, c: CommentState) {
  const a = `${urls.api}/repos/${repo.fullName}`;
  return {
    id: c.id,
    node_id: nodeId('IC', c.id),
    url: `${a}/issues/comments/${c.id}`,
    html_url: `${urls.server}/${repo.fullName}/pull/${c.issueNumber}#issuecomment-${c.id}`,
    issue_url: `${a}/issues/${c.issueNumber}`,
    body: c.body,
    user: user(urls, c.user),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
    author_association: 'MEMBER',
  };
}

export function status(urls: Urls, repo: RepoState, sha: string, s: StatusState, withCreator: boolean) {
  const base = {
    url: `${urls.api}/repos/${repo.fullName}/statuses/${sha}`,
    avatar_url: `${urls.server}/avatars/${encodeURIComponent(s.creator)}`,
    id: s.id,
    node_id: nodeId('SC', s.id),
    state: s.state,
    description: s.description,
    target_url: s.targetUrl,
    context: s.context,
    created_at: s.createdAt,
    updated_at: s.createdAt,
  };
  return withCreator ? { ...base, creator: user(urls, s.creator) } : base;
}

export function checkRun(urls: Urls, repo: RepoState, r: CheckRunState) {
  return {
    id: r.id,
    head_sha: r.headSha,
    node_id: nodeId('CR', r.id),
    external_id: null,
    url: `${urls.api}/repos/${repo.fullName}/check-runs/${r.id}`,
    html_url: `${urls.server}/${repo.fullName}/runs/${r.id}`,
    details_url: r.detailsUrl,
    status: r.status,
    conclusion: r.conclusion,
    started_at: r.startedAt,
    completed_at: r.completedAt,
    output: {
      title: r.title,
      summary: r.summary,
      text: null,
      annotations_count: 0,
      annotations_url: `${urls.api}/repos/${repo.fullName}/check-runs/${r.id}/annotations`,
    },
    name: r.name,
    check_suite: { id: r.id },
    app: null,
    pull_requests: [],
  };
}
