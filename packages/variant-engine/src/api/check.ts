import { decodePackageVariant, decodePackageVariantSet } from './decode.js';
import type { PackageVariant, PackageVariantSet } from './types.js';
import { validatePackageVariant, validatePackageVariantSet, type SetValidationOptions } from './validate.js';

/** A document decoded and checked, with every problem found in it. */
export interface Checked<T> {
  readonly value: T;
  /** Wrong types, then unknown fields, then Porch's validation messages; empty when valid. */
  readonly problems: readonly string[];
}

/**
 * A PackageVariant document, every problem at once: a user fixing an unknown field should not
 * learn of a missing required one only on the next try (Porch reports its validation messages
 * beside each other, and a document with unknown fields still gets them).
 */
export function checkPackageVariant(raw: unknown): Checked<PackageVariant> {
  const d = decodePackageVariant(raw);
  return { value: d.value, problems: [...d.errors, ...d.unknownFields, ...validatePackageVariant(d.value)] };
}

/** A PackageVariantSet document, every problem at once (see `checkPackageVariant`). */
export function checkPackageVariantSet(raw: unknown, options: SetValidationOptions = {}): Checked<PackageVariantSet> {
  const d = decodePackageVariantSet(raw);
  return { value: d.value, problems: [...d.errors, ...d.unknownFields, ...validatePackageVariantSet(d.value, options)] };
}
