// Which routes own a path, so that a wrong method gets 405 with an Allow header instead of
// a bare 404, and a parametric route never answers for a path that a fixed one owns.
// Fed by the onRoute hook with every route as it is registered.
import { RESERVED_USERNAMES } from '../schemas/common.js';

interface RoutePattern {
  url: string;
  methods: Set<string>;
  regex: RegExp;
  /** No parameters: a path it matches is that route's own, whatever parametric routes say. */
  fixed: boolean;
}

const AUTHOR_PARAM = ':author';
/** A reserved word in the `{author}` place is a fixed path of ours, never a ladder's author. */
const isAuthorMatch = (match: RegExpExecArray) => match.groups?.author === undefined || !RESERVED_USERNAMES.has(match.groups.author);

/** The path as the router sees it: percent-decoded segment by segment (undecodable ones kept). */
function decodedPath(path: string): string {
  if (!path.includes('%')) return path;
  return path
    .split('/')
    .map((segment) => {
      try {
        return decodeURIComponent(segment).replaceAll('/', '%2F');
      } catch {
        return segment;
      }
    })
    .join('/');
}

export function createRouteIndex() {
  const routes: RoutePattern[] = [];
  const fixedUrls = new Set<string>();

  function owners(path: string): RoutePattern[] {
    const decoded = decodedPath(path);
    const matching = routes.filter((r) => {
      const match = r.regex.exec(decoded);
      return match !== null && isAuthorMatch(match);
    });
    return matching.some((r) => r.fixed) ? matching.filter((r) => r.fixed) : matching;
  }

  return {
    add(url: string, method: string | string[]): void {
      const methods = [method].flat().filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
      if (methods.length === 0) return;
      const source = url
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(AUTHOR_PARAM, '(?<author>[^/]+)')
        .replace(/:[A-Za-z_]\w*/g, '[^/]+')
        .replace(/\*/g, '.*');
      const fixed = !/[:*]/.test(url);
      if (fixed) fixedUrls.add(url.replace(/\/$/, ''));
      // A fixed path is its own exactly (`/ui` is not `/ui/`, which `/ui/*` serves); a parametric one also with a trailing slash.
      routes.push({ url, methods: new Set(methods), regex: new RegExp(fixed ? `^${source}$` : `^${source}/?$`), fixed });
    },

    /** The methods registered for `path`; empty when no route has it at all. */
    allowedMethods(path: string): string[] {
      return [...new Set(owners(path).flatMap((r) => [...r.methods]))];
    },

    /**
     * Whether the route registered as `url` may answer for `path`. The router falls back from
     * a fixed path to a parametric route when the fixed one lacks the method (GET
     * /v1/chat/completions reaches /v1/:author/:ladder); such a request is not that route's.
     */
    owns(url: string, path: string): boolean {
      if (fixedUrls.has(url.replace(/\/$/, ''))) return true;
      return owners(path).some((r) => r.url === url);
    },
  };
}
