import { inert, shortName, webLink } from '../markdown.js';
import type { Proposal } from '../forges/forge.js';
import { parseMetadataBlock } from './proposal-metadata.js';

/**
 * What a new proposal says of the declined one it follows: its title, where a reviewer finds it
 * (a link to its page on a forge with web pages; the record's path on the local forge, which the
 * new proposal rewrites: its earlier text is in that file's history) and what it proposed.
 */
export function declineNote(declined: Pick<Proposal, 'title' | 'url' | 'body'>): string {
  // a pull request's title can be edited by people: strangers' text
  const title = inert(shortName(declined.title));
  const upstream = parseMetadataBlock(declined.body)?.upstream;
  const what = upstream ? `upstream ${inert(upstream.ref, 'code')}, commit ${inert(upstream.commit.slice(0, 12), 'code')}` : undefined;
  const where = webLink('its page', declined.url);
  const found = where ? `see ${where}` : `its record, ${inert(declined.url, 'code')}, now holds this proposal`;
  return `A previous proposal, "${title}"${what ? ` (${what})` : ''}, was declined (${found}): this one is proposed because the upstream or the variant changed since.`;
}
