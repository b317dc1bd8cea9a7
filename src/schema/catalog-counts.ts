import type { GroupCount } from '../db/catalog/product-groups';
import { builder } from './builder';

/** The catalogue's categories and brands with their product counts, for menus and facets. */

const CategoryCount = builder.objectRef<GroupCount>('CategoryCount').implement({
  description: 'A category and its number of products.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'As `categoryName` on products; `?category=` on /api/v1.' }),
    productCount: t.exposeInt('productCount', {
      description: 'Equals `meta.total` of `GET /api/v1/products?category=<name>`.',
    }),
  }),
});

const BrandCount = builder.objectRef<GroupCount>('BrandCount').implement({
  description: 'A brand and its number of products.',
  fields: (t) => ({
    id: t.exposeString('key', { description: 'As `brandId` on products.' }),
    name: t.exposeString('name'),
    productCount: t.exposeInt('productCount'),
  }),
});

builder.queryFields((t) => ({
  categories: t.field({
    type: [CategoryCount],
    description: 'Every category with its product count, sorted by name.',
    resolve: (_root, _args, ctx) => ctx.products.countByCategory(),
  }),
  brands: t.field({
    type: [BrandCount],
    description: 'Every brand with its product count, sorted by name.',
    resolve: (_root, _args, ctx) => ctx.products.countByBrand(),
  }),
}));
