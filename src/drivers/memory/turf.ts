// The turf modules behind the memory driver's geo operators (geo.ts), apart so that they load
// only when a filter, update or pipeline first uses a geo operator: a module of their own in a
// bundle (the Workers build), which deployments without geo queries never load.
export { default as booleanIntersects } from "@turf/boolean-intersects";
export { default as booleanWithin } from "@turf/boolean-within";
export { default as distance } from "@turf/distance";
