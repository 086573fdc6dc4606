/** A member address after parsing; `canonical` is the registry key of the member. */
export type MemberAddress =
  | {
    readonly kind: "tcp";
    readonly hostname: string;
    readonly port: number;
    readonly canonical: string;
  }
  | { readonly kind: "unix"; readonly path: string; readonly canonical: string };
