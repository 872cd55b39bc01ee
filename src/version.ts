// everest's version, as the home endpoint's INFO block reports it; a test keeps it equal to
// package.json's (which a runtime bundle cannot read).
export const EVEREST_VERSION = "0.1.0";
