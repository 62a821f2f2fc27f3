// The operator's caps on what a ladder may ask for; the meaning checks and the knob checks both read them.

export interface ValidationLimits {
  /** Highest executionBudget.maxSpend in USD; default 50. */
  maxSpendCap: number;
  /** Highest recursion.maxDepth, literal or through a knob; default 10. */
  maxRecursionDepth: number;
}
