// The methods of the opt-in writes (docs/updates.md): update operators in an item PATCH, PATCH
// and DELETE by filter, and the compiler of a resource's operators. One module to import when a
// resource first needs one, so bundles keep them out of what other deployments load.
export { deleteByFilter, deleteManyInternal, patchByFilter, patchManyInternal } from "./by-filter.ts";
export { operatorPatchInternal, patchItemWithOperators } from "./patch-operators.ts";
export { compileOperators, itemsResource } from "../validation/operators.ts";
