import { Kind } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import { formatTimestamp } from '../format/timestamp';
import { builder } from './builder';

const OFFSET_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function parseTimestamp(value: unknown): Date {
  if (typeof value === 'string' && OFFSET_TIMESTAMP.test(value)) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  throw createGraphQLError('DateTime must be an ISO 8601 timestamp with a UTC offset.', {
    extensions: { code: 'BAD_USER_INPUT' },
  });
}

builder.scalarType('DateTime', {
  description:
    'An ISO 8601 timestamp with an explicit UTC offset and no fraction: 2026-03-14T09:26:53+00:00.',
  serialize: (value) => formatTimestamp(value),
  parseValue: parseTimestamp,
  parseLiteral: (ast) => parseTimestamp(ast.kind === Kind.STRING ? ast.value : undefined),
});
