import type { PlatformComment } from '../platforms/types';

/**
 * Which comments of a platform's listing belong to one part of a thread. Each part is a post of its own and its
 * comments are listed per post, but a platform with reply chains lists more than the part's own comments: x lists a
 * whole conversation by its root (every part's replies), and bluesky, mastodon and threads list a part's reply tree,
 * in which the next part and everything under it hang. A comment belongs to the part when the first part met walking
 * up from it is this one: another part is never a comment, and what answers another part is that part's.
 *
 * Listings come newest first, so a reply may arrive pages before its parent: it waits for it. A comment still waiting
 * when the read ends (its parent never listed: deleted, or older than the platform's listing reaches, x's 7 days) is
 * kept if its parent chain reaches a comment stored for this part before, or it was stored for this part itself. One
 * whose chain reaches no part and nothing stored (its parent and grandparent gone, or past x's 7 days and never
 * stored) is the first part's (`unplaced`): every part's read holds it, and it used to be dropped from all of them.
 * Before that, the sync looks the chain's missing ancestors up by id (`unknownAncestors`, `learn`, `leftOver` again),
 * so only a chain whose ancestors are deleted (or past the lookups' cap) still goes to the first part.
 */
export class ThreadPartComments {
  private readonly accepted = new Set<string>();
  private readonly rejected = new Set<string>();
  private readonly waiting = new Map<string, PlatformComment[]>();
  /** What tweets the read did not list answer (`CommentPage.ancestors`): links up a chain whose parent never came. */
  private readonly ancestors = new Map<string, string>();
  /** Ids already looked up by id (`markAsked`). */
  private readonly asked = new Set<string>();

  /** `parts`: the platform ids of every part of the thread, this one (`part`) included. */
  constructor(
    private readonly part: string,
    private readonly parts: ReadonlySet<string>,
  ) {}

  /** One page sorted: the comments now known to be this part's (with any that waited for one of them). */
  take(page: readonly PlatformComment[]): PlatformComment[] {
    const taken: PlatformComment[] = [];
    for (const comment of page) {
      const parent = comment.platformParentId ?? this.part;
      if (this.parts.has(comment.platformCommentId)) this.reject(comment.platformCommentId);
      else if (parent === this.part || this.accepted.has(parent)) this.accept(comment, taken);
      else if (this.parts.has(parent) || this.rejected.has(parent)) this.reject(comment.platformCommentId);
      else this.waitFor(parent, comment);
    }
    return taken;
  }

  /** Links up reply chains the page named without listing them (x's included parents), or a lookup by id found. */
  learn(ancestors: ReadonlyArray<{ id: string; parentId: string }>): void {
    for (const { id, parentId } of ancestors) this.ancestors.set(id, parentId);
  }

  /**
   * At the end of the read: the comments still waiting whose parent was stored for this part before (`storedIds`),
   * or that were themselves, with the replies waiting under them. On x a new reply to a comment older than 7 days
   * comes without its parent, which is stored: it used to be dropped (README "Comment listing and sync", 2026-12-07).
   * Then the chains the missing parents' own links (`learn`) lead to a part: this one's are kept, another's left out
   * (a reply to a comment past the 7 days and never stored, on a later part, used to go to the first part).
   */
  leftOver(storedIds: ReadonlySet<string>): PlatformComment[] {
    const taken: PlatformComment[] = [];
    for (const parent of [...this.waiting.keys()]) {
      if (storedIds.has(parent)) this.acceptUnder(parent, taken);
    }
    for (const parent of [...this.waiting.keys()]) {
      if (!this.waiting.has(parent)) continue; // accepted under another just now
      const placed = this.placeThroughAncestors(parent, storedIds);
      if (placed === 'here') this.acceptUnder(parent, taken);
      else if (placed === 'elsewhere') this.reject(parent);
    }
    for (const comment of [...this.waiting.values()].flat()) {
      if (storedIds.has(comment.platformCommentId) && !this.accepted.has(comment.platformCommentId)) this.accept(comment, taken);
    }
    return taken;
  }

  /**
   * After `leftOver`: where the chains still waiting stop, to be looked up by id (`commentParents`): for each missing
   * parent, the farthest ancestor the learned links reach, unless it was asked for before (a deleted tweet answers
   * nothing). A chain whose missing parent or first waiting comment is stored on another part (`storedElsewhere`) is
   * that part's and costs no call. x's search includes only each reply's parent, so a reply whose parent and
   * grandparent are both past the 7 days and never stored reached no part and went to the first part.
   */
  unknownAncestors(storedElsewhere: ReadonlySet<string>): string[] {
    const waitingComments = new Set([...this.waiting.values()].flat().map((c) => c.platformCommentId));
    const unknown = new Set<string>();
    for (const [parent, children] of this.waiting) {
      if (waitingComments.has(parent)) continue; // reached through its own chain
      // Kept already (stored here before: `leftOver`), or another part's.
      const open = children.filter((c) => !this.accepted.has(c.platformCommentId));
      if (open.length === 0 || storedElsewhere.has(parent) || open.some((c) => storedElsewhere.has(c.platformCommentId))) continue;
      let id = parent;
      for (let steps = 0; this.ancestors.has(id) && steps < 100; steps++) id = this.ancestors.get(id)!;
      if (!this.asked.has(id)) unknown.add(id);
    }
    return [...unknown];
  }

  /** Ids looked up by id (`unknownAncestors` leaves them out from now on, found or not). */
  markAsked(ids: readonly string[]): void {
    for (const id of ids) this.asked.add(id);
  }

  /** Platform ids still waiting (after `leftOver`): the comments, and the parents they wait for. */
  waitingIds(): string[] {
    return [...this.waiting.keys(), ...[...this.waiting.values()].flat().map((c) => c.platformCommentId)];
  }

  /**
   * For the thread's first part, after `leftOver`: the comments still waiting whose chain reaches no part and nothing
   * stored, kept with their parent id as the platform gave it (as a single post keeps a reply whose parent it did not
   * list). A chain whose missing parent, or whose first waiting comment, is stored on another part (`storedElsewhere`)
   * is that part's (its `leftOver` keeps it), so it is not stored twice.
   */
  unplaced(storedElsewhere: ReadonlySet<string>): PlatformComment[] {
    const taken: PlatformComment[] = [];
    const waitingComments = new Set([...this.waiting.values()].flat().map((c) => c.platformCommentId));
    for (const parent of [...this.waiting.keys()]) {
      // A parent that itself waits is reached through its own chain.
      if (waitingComments.has(parent) || !this.waiting.has(parent)) continue;
      const children = this.waiting.get(parent) ?? [];
      this.waiting.delete(parent);
      for (const child of children) {
        if (storedElsewhere.has(parent) || storedElsewhere.has(child.platformCommentId)) this.reject(child.platformCommentId);
        else this.accept(child, taken);
      }
    }
    return taken;
  }

  /** Platform ids the listing returned that belong elsewhere (another part, or under one). */
  elsewhere(): string[] {
    return [...this.rejected];
  }

  /** The replies that waited for `parent`, which is placed here though not listed (stored, or its chain leads here). */
  private acceptUnder(parent: string, taken: PlatformComment[]): void {
    const children = this.waiting.get(parent) ?? [];
    this.waiting.delete(parent);
    for (const child of children) this.accept(child, taken);
  }

  /** Where the chain up from a missing parent leads through learned links: this part, another, or nowhere known. */
  private placeThroughAncestors(parent: string, storedIds: ReadonlySet<string>): 'here' | 'elsewhere' | null {
    let id: string | undefined = this.ancestors.get(parent);
    for (let steps = 0; id !== undefined && steps < 100; steps++) {
      if (id === this.part || this.accepted.has(id) || storedIds.has(id)) return 'here';
      if (this.parts.has(id) || this.rejected.has(id)) return 'elsewhere';
      id = this.ancestors.get(id);
    }
    return null;
  }

  private waitFor(parent: string, comment: PlatformComment): void {
    const siblings = this.waiting.get(parent);
    if (siblings) siblings.push(comment);
    else this.waiting.set(parent, [comment]);
  }

  private accept(comment: PlatformComment, taken: PlatformComment[]): void {
    this.accepted.add(comment.platformCommentId);
    taken.push(comment);
    const children = this.waiting.get(comment.platformCommentId);
    this.waiting.delete(comment.platformCommentId);
    for (const child of children ?? []) this.accept(child, taken);
  }

  private reject(platformCommentId: string): void {
    this.rejected.add(platformCommentId);
    const children = this.waiting.get(platformCommentId);
    this.waiting.delete(platformCommentId);
    for (const child of children ?? []) this.reject(child.platformCommentId);
  }
}
