// Lists and their items (docs/endpoints.md, sub-resources): items live under their list's URL,
// a list is served with its items inside, and deleting a list deletes its items.
//
//   POST   /lists                      {"title": "groceries"}
//   POST   /lists/<list id>/items      {"name": "milk"}          (list_id comes from the URL)
//   GET    /lists/<list id>            the list, with "items": [...]
//   DELETE /lists/<list id>            the list and all its items
//
// The hooks need the app (they call `app.internal`), so they are installed on it after creation:
//
//   import { createHandler } from "everest";
//   import settings, { install } from "./examples/parent-children/settings.ts";
//   const handler = createHandler(settings);
//   install(handler.app);
import type { App, Doc, Settings } from "everest-api";

export default {
  RESOURCE_METHODS: ["GET", "POST", "DELETE"],
  ITEM_METHODS: ["GET", "PATCH", "PUT", "DELETE"],
  DOMAIN: {
    lists: {
      schema: { title: { type: "string", required: true } },
    },
    items: {
      url: 'lists/<regex("[a-f0-9]{24}"):list_id>/items',
      schema: {
        list_id: { type: "objectid", required: true, data_relation: { resource: "lists", embeddable: true } },
        name: { type: "string", required: true },
      },
    },
  },
} satisfies Settings;

export function install(app: App): void {
  app.on("on_fetched_item_lists", async (list: Doc) => {
    // The largest page a client could ask for; a list longer than that is better read by its URL.
    const { body } = await app.internal.get("items", { list_id: list._id }, { max_results: app.config.DOMAIN.items!.pagination_limit });
    list.items = body!._items;
  });
  app.on("on_deleted_item_lists", async (list: Doc) => {
    const { status, body } = await app.internal.delete("items", { list_id: list._id });
    // 404: the list had no items.
    if (status !== 204 && status !== 404) throw new Error(`deleting the items of list ${String(list._id)} failed: ${JSON.stringify(body)}`);
  });
}
