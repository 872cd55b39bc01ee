// The custom rules and types the validation tests register, made known to the Settings type the
// way an application does it (src/settings/types.ts, CustomRules and CustomTypes).
declare module "../../src/settings/types.ts" {
  interface CustomRules {
    isodd?: boolean;
    available?: boolean;
    mirrors?: string;
    spy?: boolean;
    not_blocked?: string;
    is_badge?: boolean;
  }
  interface CustomTypes {
    even: true;
    special_thing: true;
  }
}

export {};
