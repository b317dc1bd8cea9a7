import { builder } from './builder';
import './scalars';
import './money';
import './product';
import './catalog-counts';
import './order';
import './order-list';
import './order-live';

export const schema = builder.toSchema({ sortSchema: true });
