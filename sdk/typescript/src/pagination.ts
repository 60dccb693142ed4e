/**
 * Every list of the API pages the same way (`limit`, `starting_after`; answers `{data, has_more, next_cursor}`).
 * A list method returns a PagePromise: `await` it for the first page, or `for await` it for every item of every
 * page, the next page asked for only when the items before it have been used. Nothing is requested until one of
 * the two happens.
 */

/** One page of a list, as the API sends it. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  /** Pass as `starting_after` for the next page; null on the last page. */
  next_cursor: string | null;
}

/** Loads the page after `cursor` (undefined: the first page). */
export type PageLoader<T> = (cursor: string | undefined) => Promise<Page<T>>;

/** The first page (as a promise) and every item of every page (as an async iterable). */
export class PagePromise<T> implements Promise<Page<T>>, AsyncIterable<T> {
  readonly [Symbol.toStringTag] = 'PagePromise';
  readonly #load: PageLoader<T>;
  #first: Promise<Page<T>> | undefined;

  constructor(load: PageLoader<T>) {
    this.#load = load;
  }

  #firstPage(): Promise<Page<T>> {
    this.#first ??= this.#load(undefined);
    return this.#first;
  }

  // biome-ignore lint/suspicious/noThenProperty: a PagePromise is awaited for its first page, by design.
  then<R1 = Page<T>, R2 = never>(
    onfulfilled?: ((page: Page<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#firstPage().then(onfulfilled, onrejected);
  }

  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<T> | R> {
    return this.#firstPage().catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#firstPage().finally(onfinally);
  }

  /** Every item of every page, in the list's order, one page requested at a time. */
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let page = await this.#firstPage();
    for (;;) {
      yield* page.data;
      if (!page.has_more || page.next_cursor === null) return;
      page = await this.#load(page.next_cursor);
    }
  }
}

/** A PagePromise over any paged call. */
export function paginate<T>(load: PageLoader<T>): PagePromise<T> {
  return new PagePromise(load);
}
