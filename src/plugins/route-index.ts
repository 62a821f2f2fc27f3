// Which methods a path answers to, so that a wrong method gets 405 with an Allow header
// instead of a bare 404. Fed by the onRoute hook with every route as it is registered.
import { RESERVED_USERNAMES } from '../schemas/common.js';

interface RoutePattern {
  methods: Set<string>;
  regex: RegExp;
  /** No parameters: a path it matches is that route's own, whatever parametric routes say. */
  fixed: boolean;
}

const AUTHOR_PARAM = ':author';
/** A reserved word in the `{author}` place is a fixed path of ours, never a ladder's author. */
const isAuthorMatch = (match: RegExpExecArray) => match.groups?.author === undefined || !RESERVED_USERNAMES.has(match.groups.author);

export function createRouteIndex() {
  const routes: RoutePattern[] = [];
  return {
    add(url: string, method: string | string[]): void {
      const methods = [method].flat().filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
      const source = url
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(AUTHOR_PARAM, '(?<author>[^/]+)')
        .replace(/:[A-Za-z_]\w*/g, '[^/]+')
        .replace(/\*/g, '.*');
      routes.push({ methods: new Set(methods), regex: new RegExp(`^${source}/?$`), fixed: !/[:*]/.test(url) });
    },

    /** The methods registered for `path`; empty when no route has it at all. */
    allowedMethods(path: string): string[] {
      const matching = routes.filter((r) => {
        const match = r.regex.exec(path);
        return match !== null && isAuthorMatch(match);
      });
      const owners = matching.some((r) => r.fixed) ? matching.filter((r) => r.fixed) : matching;
      return [...new Set(owners.flatMap((r) => [...r.methods]))];
    },
  };
}
