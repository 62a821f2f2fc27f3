// Shared by the /v1/pipelines tests: starting, reading and cancelling instances over
// app.inject, on the ladder harness (a fake OpenAI that echoes).
import type { Harness, User } from '../e2e/ladder-harness.js';

export type Headers = Record<string, string>;

export const startBody = (user: User, template: string, body: Record<string, unknown>) => ({ author: user.username, template, ...body });

export function start(h: Harness, user: User, payload: Record<string, unknown>, headers: Headers = {}) {
  return h.app.inject({ method: 'POST', url: '/v1/pipelines/instances', headers: { ...user.headers, ...headers }, payload });
}

export const getInstance = (h: Harness, user: User, id: string) =>
  h.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${id}`, headers: user.headers });

export const getTrace = (h: Harness, user: User, id: string) =>
  h.app.inject({ method: 'GET', url: `/v1/pipelines/instances/${id}/trace`, headers: user.headers });

export const cancel = (h: Harness, user: User, id: string) =>
  h.app.inject({ method: 'POST', url: `/v1/pipelines/instances/${id}/cancel`, headers: user.headers });

export const list = (h: Harness, user: User, query = '') =>
  h.app.inject({ method: 'GET', url: `/v1/pipelines/instances${query}`, headers: user.headers });

/** The exact 404 every unknown, malformed or foreign instance id gets. */
export const notFoundBody = (id: string) =>
  JSON.stringify({ error: { message: `Instance "${id}" was not found.`, type: 'invalid_request_error', code: 'instance_not_found', param: null } });

/** Moves a row along as a worker would, for the read paths a worker-less branch cannot reach. */
export async function setRow(h: Harness, id: string, assignments: string, params: unknown[] = []) {
  await h.testApp.database.query(`update instances set ${assignments} where id = $1`, [id, ...params]);
}
