// The price table moved to src/pricing/ (direct calls and ladders share it); ladder code keeps this path.
export * from '../pricing/prices.js';
