/** ISO 8601 with an explicit UTC offset and no fraction: 2026-03-14T09:26:53+00:00. */
export function formatTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}+00:00`;
}
