// Attribute names that are not in the stable semantic conventions (the GenAI ones are still
// "development": the conventions ask users to copy them rather than import the incubating
// entry point), and this service's own, under `ladder.`.
export const GEN_AI = {
  system: 'gen_ai.system',
  operation: 'gen_ai.operation.name',
  requestModel: 'gen_ai.request.model',
  maxTokens: 'gen_ai.request.max_tokens',
  temperature: 'gen_ai.request.temperature',
  responseModel: 'gen_ai.response.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
} as const;

export const LADDER = {
  provider: 'ladder.provider',
  vendorRequestId: 'ladder.vendor_request_id',
  costUsd: 'ladder.cost_usd',
  streamOutcome: 'ladder.stream.outcome',
  ladder: 'ladder.name',
  instanceId: 'ladder.instance_id',
  runMode: 'ladder.run.mode',
  runAttempt: 'ladder.run.attempt',
  runResumed: 'ladder.run.resumed',
  modelCalls: 'ladder.model_calls',
  input: 'ladder.input',
  answer: 'ladder.answer',
  stepId: 'ladder.step.id',
  groupId: 'ladder.group.id',
  pass: 'ladder.pass',
  depth: 'ladder.depth',
  node: 'ladder.node',
  callKey: 'ladder.call_key',
} as const;

// `gen_ai.system` values the conventions define, by catalog provider id; others go by their id.
const SYSTEMS: Record<string, string> = {
  google: 'gcp.gemini',
  mistral: 'mistral_ai',
  'azure-openai': 'az.ai.openai',
};

export const genAiSystem = (provider: string): string => SYSTEMS[provider] ?? provider;
