import { builder } from './builder';
import './scalars';
import './money';
import './product';
import './order';

export const schema = builder.toSchema({ sortSchema: true });
