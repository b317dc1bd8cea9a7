import { resolveCursorConnection, type ResolveCursorConnectionArgs } from '@pothos/plugin-relay';
import type { ProductDoc, VariantDoc } from '../db/documents';
import type { ProductCriteria } from '../db/catalog/product-plans';
import {
  DEFAULT_CONNECTION_SIZE,
  DEFAULT_PAGE,
  DEFAULT_PER_PAGE,
  MAX_CONNECTION_SIZE,
  MAX_PAGE,
  MAX_PER_PAGE,
  checkBoundedInteger,
  checkRequired,
  checkText,
  criteriaFor,
  normaliseText,
  pageNumbers,
  type PageNumbers,
} from '../catalog/product-query';
import { isRestExecution, type AppContext } from '../context';
import { badUserInput, type FieldErrors } from '../errors';
import { builder } from './builder';
import { checkConnectionArgs, withNullCursors, type ConnectionArgs } from './connection-args';
import { brandedNodes, databaseIdOf } from './global-id';
import { ProductMoney } from './money';
import { decodeCursor, encodeCursor, queryFingerprint, type CursorQuery } from './product-cursor';

function byId<T>(ids: readonly (string | number)[], docs: T[], key: (doc: T) => number): (T | null)[] {
  const found = new Map(docs.map((doc) => [key(doc), doc]));
  return ids.map((id) => found.get(databaseIdOf(id)) ?? null);
}

export const Variant = builder.objectRef<VariantDoc>('Variant');
builder.node(Variant, {
  description: 'The one purchasable variant of a product.',
  id: { resolve: (variant) => variant.id },
  loadMany: async (ids, ctx) =>
    brandedNodes(
      'Variant',
      byId(
        ids,
        (await ctx.products.findByVariantIds(ids.map(databaseIdOf))).map((product) => product.variant),
        (variant) => variant.id,
      ),
    ),
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'Numeric identifier (`id` on /api/v1).' }),
    name: t.exposeString('name'),
    price: t.field({ type: ProductMoney, description: 'Selling price.', resolve: (v) => v.price }),
    faceValue: t.field({
      type: ProductMoney,
      description: 'Nominal value; may equal price.',
      resolve: (v) => v.face_value,
    }),
  }),
});

export const Product = builder.objectRef<ProductDoc>('Product');
builder.node(Product, {
  description: 'A digital good in the catalogue.',
  id: { resolve: (product) => product.id },
  loadMany: async (ids, ctx) =>
    brandedNodes(
      'Product',
      byId(ids, await ctx.products.findByIds(ids.map(databaseIdOf)), (product) => product.id),
    ),
  fields: (t) => ({
    databaseId: t.exposeInt('id', { description: 'Numeric identifier (`id` on /api/v1).' }),
    name: t.exposeString('name'),
    url: t.exposeString('url', { description: 'Address of the product page.' }),
    description: t.exposeString('description'),
    shortDescription: t.exposeString('short_description'),
    notes: t.exposeString('notes', { nullable: true, description: 'Null when there are no notes.' }),
    categoryName: t.exposeString('category_name'),
    brandName: t.exposeString('brand_name'),
    brandId: t.exposeString('brand_id', { description: 'Identifier of the brand.' }),
    images: t.exposeStringList('images', { description: 'Image references; one or more.' }),
    region: t.exposeString('region', { description: 'Region the product is valid for.' }),
    channel: t.exposeString('channel', { description: 'Observed values: `API`, `Non API`.' }),
    tags: t.exposeStringList('tags', { description: 'May be empty.' }),
    isPermanentOutOfStock: t.exposeBoolean('is_permanent_out_of_stock'),
    discountPercentage: t.exposeInt('discount_percentage', {
      description: '0 when there is no discount.',
    }),
    variant: t.field({ type: Variant, description: 'Exactly one variant.', resolve: (p) => p.variant }),
    createdAt: t.field({ type: 'DateTime', resolve: (p) => p.created_at }),
    updatedAt: t.field({ type: 'DateTime', resolve: (p) => p.updated_at }),
  }),
});

interface ProductPageShape extends PageNumbers {
  items: ProductDoc[];
}

const ProductPage = builder.objectRef<ProductPageShape>('ProductPage').implement({
  description: 'One numbered page of products, with the numbers of the /api/v1 `meta` object.',
  fields: (t) => ({
    items: t.field({ type: [Product], resolve: (page) => page.items }),
    currentPage: t.exposeInt('currentPage'),
    perPage: t.exposeInt('perPage'),
    total: t.exposeInt('total', { description: 'Number of matching products.' }),
    lastPage: t.exposeInt('lastPage', { description: 'max(1, ceil(total / perPage)).' }),
    from: t.exposeInt('from', {
      nullable: true,
      description: 'Position of the first item; null past the end.',
    }),
    to: t.exposeInt('to', { nullable: true, description: 'Position of the last item; null past the end.' }),
  }),
});

function throwIfInvalid(errors: FieldErrors): void {
  if (Object.keys(errors).length > 0) throw badUserInput(errors);
}

interface PageArgs {
  page?: number | null;
  perPage?: number | null;
}

async function loadPage(
  ctx: AppContext,
  criteria: ProductCriteria,
  args: PageArgs,
): Promise<ProductPageShape> {
  const page = args.page ?? DEFAULT_PAGE;
  const perPage = args.perPage ?? DEFAULT_PER_PAGE;
  const skip = (page - 1) * perPage;
  const { items, stored } =
    skip < Number.MAX_SAFE_INTEGER
      ? await ctx.products.findPage(criteria, skip, perPage)
      : { items: [], stored: 0 };
  // A partial, non-empty first page with every row read proves the total, which saves the count
  // round trip. Else it is counted: a product that cannot be read is left out of the total as it
  // is of the items (src/db/catalog/readable-filter.ts), and one on an earlier page is not seen here.
  const total =
    skip === 0 && stored > 0 && stored < perPage && items.length === stored
      ? stored
      : await ctx.products.count(criteria);
  return { items, ...pageNumbers(page, perPage, total, items.length) };
}

function checkPageArgs(errors: FieldErrors, args: PageArgs): void {
  checkBoundedInteger(errors, 'page', args.page ?? undefined, MAX_PAGE);
  checkBoundedInteger(errors, 'perPage', args.perPage ?? undefined, MAX_PER_PAGE);
}

async function loadConnection(
  ctx: AppContext,
  query: CursorQuery,
  criteria: ProductCriteria,
  args: ConnectionArgs,
) {
  checkConnectionArgs(args);
  const fingerprint = queryFingerprint(query, criteria);
  const connection = await resolveCursorConnection(
    {
      args,
      toCursor: (product: ProductDoc) => encodeCursor(fingerprint, product.id),
      defaultSize: DEFAULT_CONNECTION_SIZE,
      maxSize: MAX_CONNECTION_SIZE,
    },
    ({ after, before, limit, inverted }: ResolveCursorConnectionArgs) =>
      ctx.products.findWindow(criteria, {
        ...(after ? { afterId: decodeCursor(after, fingerprint, 'after') } : {}),
        ...(before ? { beforeId: decodeCursor(before, fingerprint, 'before') } : {}),
        limit,
        descending: inverted,
      }),
  );
  return withNullCursors({ ...connection, totalCount: () => ctx.products.count(criteria) });
}

const ProductConnection = builder.connectionObject(
  {
    type: Product,
    name: 'ProductConnection',
    description: 'Products ordered by `id` ascending, in keyset-paged windows.',
  },
  { name: 'ProductEdge' },
);

builder.queryFields((t) => ({
  products: t.connection(
    {
      type: Product,
      description: 'Lists products, optionally filtered. Same matching as `GET /api/v1/products`.',
      args: {
        search: t.arg.string({
          required: false,
          description:
            'Every whitespace-separated word must occur, case-insensitively and literally, in the name, ' +
            'short description, brand name, category name or a tag. Blank means no filter.',
        }),
        category: t.arg.string({
          required: false,
          description: 'Category name, exact and case-insensitive; at most 200 characters.',
        }),
      },
      resolve: (_root, args, ctx) => {
        const search = normaliseText(args.search);
        const category = normaliseText(args.category);
        const errors: FieldErrors = {};
        checkText(errors, 'search', search);
        checkText(errors, 'category', category);
        throwIfInvalid(errors);
        return loadConnection(ctx, 'products', criteriaFor(search, category), args);
      },
    },
    ProductConnection,
  ),
  searchProducts: t.connection(
    {
      type: Product,
      description: 'Searches products by a required term. Same matching as `GET /api/v1/products/search`.',
      args: {
        term: t.arg.string({ required: true, description: 'Words to find; at most 200 characters.' }),
      },
      resolve: (_root, args, ctx) => {
        const term = normaliseText(args.term);
        const errors: FieldErrors = {};
        checkRequired(errors, 'term', term);
        checkText(errors, 'term', term);
        throwIfInvalid(errors);
        return loadConnection(ctx, 'searchProducts', criteriaFor(term, undefined), args);
      },
    },
    ProductConnection,
  ),
  productPage: t.field({
    type: ProductPage,
    description: 'One numbered page of products, as `GET /api/v1/products` serves it.',
    args: {
      page: t.arg.int({ required: false, description: 'Page number, from 1. Default 1.' }),
      perPage: t.arg.int({ required: false, description: 'Items per page, 1 to 100. Default 15.' }),
      search: t.arg.string({ required: false, description: 'As for `products`.' }),
      category: t.arg.string({
        required: false,
        description: 'Category name, exact and case-insensitive; at most 200 characters.',
      }),
    },
    resolve: (_root, args, ctx) => {
      const search = normaliseText(args.search);
      const category = normaliseText(args.category);
      // /api/v1 validated its query with the same rules (src/rest/endpoints.ts): once per request.
      if (!isRestExecution(ctx)) {
        const errors: FieldErrors = {};
        checkPageArgs(errors, args);
        checkText(errors, 'search', search);
        checkText(errors, 'category', category);
        throwIfInvalid(errors);
      }
      return loadPage(ctx, criteriaFor(search, category), args);
    },
  }),
  searchProductPage: t.field({
    type: ProductPage,
    description: 'One numbered page of a product search, as `GET /api/v1/products/search` serves it.',
    args: {
      term: t.arg.string({ required: true, description: 'Words to find; at most 200 characters.' }),
      page: t.arg.int({ required: false, description: 'Page number, from 1. Default 1.' }),
      perPage: t.arg.int({ required: false, description: 'Items per page, 1 to 100. Default 15.' }),
    },
    resolve: (_root, args, ctx) => {
      const term = normaliseText(args.term);
      if (!isRestExecution(ctx)) {
        const errors: FieldErrors = {};
        checkRequired(errors, 'term', term);
        checkText(errors, 'term', term);
        checkPageArgs(errors, args);
        throwIfInvalid(errors);
      }
      return loadPage(ctx, criteriaFor(term, undefined), args);
    },
  }),
}));
