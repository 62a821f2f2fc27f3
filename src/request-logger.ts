// Each request's logger, made when the request first writes a line. Fastify gives every
// request a pino child carrying its id; making one costs an object and the serialized bindings
// on every request, though most write nothing of their own (their one line, "request
// completed", goes through the root logger: src/plugins/request-log.ts). A line at a level
// that is off makes no child either.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level } from 'pino';

type Write = (...args: unknown[]) => void;
/** Fastify's logger is pino, which can say whether a level is on. */
export type PinoLike = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/** The member that carries the request id in every line a request logs. */
export const REQUEST_ID_LABEL = 'request_id';

class RequestLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: PinoLike,
    private readonly own: Bindings,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.own));
  }

  private write(level: Level, args: unknown[]): void {
    if ((this.made as PinoLike | null ?? this.parent).isLevelEnabled(level)) (this.real[level] as Write)(...args);
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.made as PinoLike | null ?? this.parent).isLevelEnabled(level);
  }

  fatal(...args: unknown[]) { this.write('fatal', args); }
  error(...args: unknown[]) { this.write('error', args); }
  warn(...args: unknown[]) { this.write('warn', args); }
  info(...args: unknown[]) { this.write('info', args); }
  debug(...args: unknown[]) { this.write('debug', args); }
  trace(...args: unknown[]) { this.write('trace', args); }
  silent() {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a route with its own level or serializers gets its child at once. */
export const requestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  options.level || options.serializers ? logger.child(bindings, options) : (new RequestLogger(logger as PinoLike, bindings) as unknown as FastifyBaseLogger);
