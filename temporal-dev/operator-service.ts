// temporal.api.operatorservice.v1.OperatorService: the search-attribute RPCs (what the Web UI's filter and an
// application registering its own attributes need). Everything else answers UNIMPLEMENTED.
import type { Engine } from './engine';
import { invalidArgument } from './errors';
import type { Msg } from './proto';
import { BUILTIN_SEARCH_ATTRIBUTES } from './visibility';
import type { Handler } from './workflow-service';

/** IndexedValueType numbers (temporal.api.enums.v1.IndexedValueType). */
const VALUE_TYPES = new Set([1, 2, 3, 4, 5, 6, 7]);

export function searchAttributeKeys(engine: Engine, namespace: string | undefined): Record<string, number> {
  return { ...BUILTIN_SEARCH_ATTRIBUTES, ...Object.fromEntries(engine.ns(namespace).customSearchAttributes) };
}

export function operatorServiceHandlers(engine: Engine): Record<string, Handler> {
  return {
    ListSearchAttributes: (req: Msg) => ({
      customAttributes: Object.fromEntries(engine.ns(req.namespace).customSearchAttributes),
      systemAttributes: BUILTIN_SEARCH_ATTRIBUTES,
      storageSchema: {},
    }),
    // As the real server: adding an attribute that exists with the same type is a no-op, another type is refused.
    AddSearchAttributes: (req: Msg) => {
      const ns = engine.ns(req.namespace);
      const wanted = Object.entries<number>(req.searchAttributes ?? {});
      for (const [name, type] of wanted) {
        if (!VALUE_TYPES.has(type)) throw invalidArgument(`Unable to read search attribute type: ${type}`);
        if (name in BUILTIN_SEARCH_ATTRIBUTES) throw invalidArgument(`Search attribute ${name} is reserved by system.`);
        const existing = ns.customSearchAttributes.get(name);
        if (existing !== undefined && existing !== type) {
          throw invalidArgument(`Search attribute ${name} already exists with a different type.`);
        }
      }
      for (const [name, type] of wanted) ns.customSearchAttributes.set(name, type);
      return {};
    },
  };
}
