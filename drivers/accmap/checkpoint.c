// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: checkpoint and restore of clients (ACCMAP_IOC_CHECKPOINT), for
 * CRIU's accmap plugin (tools/criu).
 *
 * This file owns the STATE encoder, the restores in progress (struct
 * accmap_ckpt_restore) and the replay sessions queued for RESTORE_FINISH.
 * It calls the client, handle, heap, tag, dma-buf, FROM_VA
 * (accmap_handle_pin_va()) and replay (accmap_replay_restore()) code; only
 * the ioctl table and client teardown call into it.
 *
 * A restore: CRIU's main process begins it (RESTORE_BEGIN) before it forks
 * the restored tree, and it ends when that file is closed.  In each
 * restored process the plugin opens /dev/accmap, makes the new client the
 * dumped one (RESTORE_CLIENT) and puts back its ids (RESTORE_BUFFER).
 * Buffers are found by their dumped serial in the restore's table: the
 * first process that names a buffer creates it, with the dumped contents,
 * and every later one (another process's id, a dma-buf passed over a
 * socket) gets the same buffer, so what was shared comes back shared, once.
 * Until the table lets go of a buffer it counts as one of the buffer's ids
 * (hrefs), so that its dma-bufs can be made as for any buffer with ids.
 * FROM_VA buffers and replay sessions need the restored process's memory
 * at its final addresses: they wait for RESTORE_FINISH, which CRIU's main
 * process issues per process when the tree is about to resume.
 *
 * RESTORE_FINISH acts on another process's memory, so it acts only on a
 * process that joined the restore itself: RESTORE_CLIENT, which only code
 * running in that process can call, records its address space and the pid
 * namespace it called from (struct accmap_ckpt_member).  FINISH of any
 * other process is refused, whatever the caller's capabilities: CRIU's
 * CAP_CHECKPOINT_RESTORE grants no right to another process's memory.
 * Dumped pids are numbers in the pid namespace of the dumped client's
 * process, and are matched in the namespace its restored process joined
 * from, so that a tree restored into a new pid namespace finds its own.
 */

#include <linux/capability.h>
#include <linux/dma-buf.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "accmap.h"
#include "svm.h"

/**
 * struct accmap_ckpt_restore - one restore in progress
 * @ref: references: the list's (until the beginning file goes), and one
 *       per client being restored into it
 * @node: in accmap_device.restores
 * @adev: the device
 * @token: what the restore's other calls name it by; random, not 0
 * @lock: protects @bufs, @members and @dead
 * @bufs: dumped serial -> struct accmap_ckpt_buf
 * @members: the processes that joined it (struct accmap_ckpt_member.node)
 * @clients: the clients being restored into it (accmap_client.ckpt_node):
 *           each holds a reference until RESTORE_FINISH of its process
 *           or its file's release, whichever takes it off the list; a
 *           client on the list is not freed while @lock is held
 * @dead: the beginning file is gone: no more buffers, and no mapping
 *        through the restore's right (accmap_checkpoint_may_map()); read
 *        without @lock there
 */
struct accmap_ckpt_restore {
	struct kref ref;
	struct list_head node;
	struct accmap_device *adev;
	u64 token;
	struct mutex lock;	/* protects bufs, members, clients, dead */
	struct xarray bufs;
	struct list_head members;
	struct list_head clients;
	bool dead;
};

/**
 * struct accmap_ckpt_member - a process that joined a restore
 * @node: in accmap_ckpt_restore.members
 * @mm: its address space, held by mmgrab(): RESTORE_FINISH acts on no other
 * @ns: the pid namespace it joined from (held): dumped pids are numbers
 *      there
 * @tgid: its thread group (held): whose FROM_VA buffers and sessions its
 *        RESTORE_FINISH makes, for RESTORE_LEFT
 * @finished: a RESTORE_FINISH of it succeeded
 */
struct accmap_ckpt_member {
	struct list_head node;
	struct mm_struct *mm;
	struct pid_namespace *ns;
	struct pid *tgid;
	bool finished;
};

/**
 * struct accmap_ckpt_buf - a buffer a restore made
 * @handle: the buffer, with a reference and an id reference (hrefs)
 * @va: FROM_VA: the first byte of the process memory
 * @origin_pid: FROM_VA: the process whose memory it pins
 * @tag: FROM_VA: the tag to give it
 * @from_va: a FROM_VA buffer, pinned by RESTORE_FINISH of @origin_pid
 * @writable: FROM_VA: pin for writing
 * @pinned: FROM_VA: pinned already
 * @exports: FROM_VA: ACCMAP_CKPT_H_EXPORT_* bits of the ids added before
 *           it was pinned: the dma-bufs it keeps, made when it is
 */
struct accmap_ckpt_buf {
	struct accmap_handle *handle;
	u64 va;
	u32 origin_pid;
	u16 tag;
	bool from_va;
	bool writable;
	bool pinned;
	u32 exports;
};

/**
 * struct accmap_ckpt_pending - a replay session waiting for RESTORE_FINISH
 * @node: in accmap_client.ckpt_sessions
 * @rec: its record
 * @maps: its @rec.nr_maps mappings
 * @attrs: its @rec.nr_attrs SVM attribute ranges
 */
struct accmap_ckpt_pending {
	struct list_head node;
	struct accmap_ckpt_session rec;
	struct accmap_replay_map *maps;
	struct accmap_ckpt_svm_attr *attrs;
};

static bool accmap_ckpt_capable(void)
{
	return capable(CAP_CHECKPOINT_RESTORE) || capable(CAP_SYS_ADMIN);
}

static void accmap_ckpt_restore_release(struct kref *ref)
{
	struct accmap_ckpt_restore *r =
		container_of(ref, struct accmap_ckpt_restore, ref);
	struct accmap_ckpt_member *m, *next;

	list_for_each_entry_safe(m, next, &r->members, node) {
		list_del(&m->node);
		mmdrop(m->mm);
		put_pid_ns(m->ns);
		put_pid(m->tgid);
		kfree(m);
	}
	xa_destroy(&r->bufs);
	mutex_destroy(&r->lock);
	kfree(r);
}

static void accmap_ckpt_restore_put(struct accmap_ckpt_restore *r)
{
	kref_put(&r->ref, accmap_ckpt_restore_release);
}

/* The restore named @token, with a reference, or NULL. */
static struct accmap_ckpt_restore *
accmap_ckpt_restore_get(struct accmap_device *adev, u64 token)
{
	struct accmap_ckpt_restore *r, *found = NULL;

	mutex_lock(&adev->restores_lock);
	list_for_each_entry(r, &adev->restores, node) {
		if (r->token == token) {
			kref_get(&r->ref);
			found = r;
			break;
		}
	}
	mutex_unlock(&adev->restores_lock);
	return found;
}

static void accmap_ckpt_pending_free(struct accmap_ckpt_pending *p)
{
	kvfree(p->maps);
	kvfree(p->attrs);
	kfree(p);
}

/* Ends a restore: its table lets go of every buffer. */
static void accmap_ckpt_restore_end(struct accmap_ckpt_restore *r)
{
	struct accmap_device *adev = r->adev;
	struct accmap_ckpt_buf *b;
	unsigned long serial;

	mutex_lock(&adev->restores_lock);
	list_del(&r->node);
	mutex_unlock(&adev->restores_lock);

	mutex_lock(&r->lock);
	WRITE_ONCE(r->dead, true);
	xa_for_each(&r->bufs, serial, b) {
		xa_erase(&r->bufs, serial);
		accmap_handle_put_id(b->handle);
		accmap_handle_put(b->handle);
		kfree(b);
	}
	mutex_unlock(&r->lock);
	accmap_ckpt_restore_put(r);
}

/**
 * accmap_checkpoint_client_fini() - end a client's part in restores
 * @client: a client whose file is being released
 *
 * A restore the client began ends; sessions it queued are dropped.
 */
void accmap_checkpoint_client_fini(struct accmap_client *client)
{
	struct accmap_ckpt_pending *p, *next;
	struct accmap_ckpt_restore *r;
	bool listed = false;

	if (client->ckpt_owned)
		accmap_ckpt_restore_end(client->ckpt_owned);

	/*
	 * Off its restore's list, unless RESTORE_FINISH took it off first:
	 * whoever does drops the client's reference.  Ours keeps @r while
	 * we wait for a FINISH that is making the client's sessions.
	 */
	mutex_lock(&client->lock);
	r = client->ckpt_restore;
	if (r)
		kref_get(&r->ref);
	mutex_unlock(&client->lock);
	if (r) {
		mutex_lock(&r->lock);
		if (!list_empty(&client->ckpt_node)) {
			list_del_init(&client->ckpt_node);
			listed = true;
		}
		mutex_unlock(&r->lock);
		if (listed)
			accmap_ckpt_restore_put(r);
		accmap_ckpt_restore_put(r);
	}
	list_for_each_entry_safe(p, next, &client->ckpt_sessions, node) {
		list_del(&p->node);
		accmap_ckpt_pending_free(p);
	}
}

/* Fills @rec from @handle; the id's fields are the caller's. */
static void accmap_ckpt_fill_handle(struct accmap_device *adev,
				    struct accmap_handle *handle,
				    struct accmap_ckpt_handle *rec)
{
	bool writable;
	u64 va;

	memset(rec, 0, sizeof(*rec));
	rec->serial = handle->serial;
	rec->size = handle->size;
	rec->heap = ACCMAP_HEAP_NONE;
	/* The process whose memory it pins, as the caller sees it. */
	if (accmap_handle_va(handle, &va, &writable,
			     task_active_pid_ns(current), &rec->origin_pid)) {
		rec->kind = ACCMAP_CKPT_KIND_FROM_VA;
		rec->va = va;
		if (writable)
			rec->state |= ACCMAP_CKPT_H_FROM_VA_WRITE;
	}

	mutex_lock(&handle->lock);
	rec->tag = handle->tag;
	if (handle->heap && rec->kind != ACCMAP_CKPT_KIND_FROM_VA) {
		rec->kind = ACCMAP_CKPT_KIND_ALLOC;
		rec->heap = handle->heap->id;
		rec->flags = handle->flags;
		strscpy(rec->heap_name, handle->heap->name,
			sizeof(rec->heap_name));
	}
	if (handle->dmabuf[ACCMAP_EXPORT_RDONLY])
		rec->state |= ACCMAP_CKPT_H_EXPORT_RDONLY;
	if (handle->dmabuf[ACCMAP_EXPORT_RDWR])
		rec->state |= ACCMAP_CKPT_H_EXPORT_RDWR;
	mutex_unlock(&handle->lock);
	/* Set once under the offsets' lock: read under it. */
	mutex_lock(&adev->offsets_lock);
	rec->map_offset = (u64)handle->map_pgoff << PAGE_SHIFT;
	mutex_unlock(&adev->offsets_lock);
	accmap_tag_get_label(adev, rec->tag, rec->label);
}

/**
 * struct accmap_ckpt_idx - the ids of a state's records, by buffer
 * @serial: the buffer
 * @readonly: the id may not write it
 * @id: an id of it in the state
 */
struct accmap_ckpt_idx {
	u64 serial;
	u32 readonly;
	u32 id;
};

/* By buffer, then writable ids first, then by id. */
static int accmap_ckpt_idx_cmp(const void *a, const void *b)
{
	const struct accmap_ckpt_idx *x = a, *y = b;

	if (x->serial != y->serial)
		return x->serial < y->serial ? -1 : 1;
	if (x->readonly != y->readonly)
		return x->readonly < y->readonly ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The @n records after @head, sorted by buffer and id, so that a session's
 * maps find their ids in the same state, once each, outside every lock.
 * NULL if there are none or no memory (*@err set to -ENOMEM for that).
 */
static struct accmap_ckpt_idx *accmap_ckpt_index(struct accmap_ckpt_client *head,
						 int *err)
{
	const struct accmap_ckpt_handle *rec = (void *)(head + 1);
	struct accmap_ckpt_idx *idx;
	u32 i;

	*err = 0;
	if (!head->nr_handles)
		return NULL;
	idx = kvmalloc_array(head->nr_handles, sizeof(*idx),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!idx) {
		*err = -ENOMEM;
		return NULL;
	}
	for (i = 0; i < head->nr_handles; i++)
		idx[i] = (struct accmap_ckpt_idx) {
			.serial = rec[i].serial,
			.readonly = !!(rec[i].state & ACCMAP_CKPT_H_ID_RDONLY),
			.id = rec[i].id,
		};
	sort(idx, head->nr_handles, sizeof(*idx), accmap_ckpt_idx_cmp, NULL);
	return idx;
}

/*
 * The entry of the id a session's map of buffer @serial is restored
 * through: its lowest writable id in @idx (@n entries), else its lowest
 * id, or NULL if none (a map that writes needs a writable id at
 * RESTORE_FINISH).
 */
static const struct accmap_ckpt_idx *
accmap_ckpt_index_find(const struct accmap_ckpt_idx *idx, u32 n, u64 serial)
{
	u32 lo = 0, hi = n;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (idx[mid].serial < serial)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && idx[lo].serial == serial ? &idx[lo] : NULL;
}

/*
 * Appends session @s's record, maps and attribute ranges at @p, which has
 * room for ACCMAP_SVM_ATTR_RANGES_MAX ranges; the maps name their buffers
 * by the ids of the state's records, @idx (@n of them).  Returns the bytes
 * written, or -ENOENT for a mapping whose buffer the client had no id for
 * when its ids were copied, or only read-only ids for a mapping that
 * writes: RESTORE_FINISH could not make either again.  The ranges are
 * copied under the mirror's lock, as they are then: SVM SET_ATTR does not
 * wait for the session's run_lock, which the caller holds.
 */
static ssize_t accmap_ckpt_fill_session(const struct accmap_ckpt_idx *idx,
					u32 n, struct accmap_replay_session *s,
					void *p)
{
	struct accmap_ckpt_session *rec = p;
	struct accmap_replay_map *maps = (void *)(rec + 1);
	struct accmap_ckpt_svm_attr *attrs;
	u32 i;

	lockdep_assert_held(&s->run_lock);
	rec->id = s->id;
	rec->target = 0;	/* the model, always target 0: no other is dumped */
	rec->format = s->format;
	rec->as = s->as;
	rec->va_bits = s->va_bits;
	rec->nr_maps = s->nr_maps;
	for (i = 0; i < s->nr_maps; i++) {
		const struct accmap_ckpt_idx *ix;
		struct accmap_handle *handle;

		handle = accmap_replay_map_record(s, i, &maps[i]);
		ix = accmap_ckpt_index_find(idx, n, handle->serial);
		if (!ix || (ix->readonly &&
			    maps[i].flags & ACCMAP_REPLAY_MAP_WRITE))
			return -ENOENT;
		maps[i].id = ix->id;
	}
	attrs = (void *)(maps + s->nr_maps);
	if (s->svm) {
		struct accmap_svm *svm = s->svm;

		rec->flags = ACCMAP_REPLAY_SETUP_SVM;
		rec->svm_start = svm->start;
		rec->svm_size = svm->end - svm->start;
		mutex_lock(&svm->lock);
		rec->nr_attrs = min_t(u32, svm->nr_ranges,
				      ACCMAP_SVM_ATTR_RANGES_MAX);
		for (i = 0; i < rec->nr_attrs; i++)
			attrs[i] = (struct accmap_ckpt_svm_attr) {
				.start = svm->ranges[i].start,
				.size = svm->ranges[i].end - svm->ranges[i].start,
				.attrs = svm->ranges[i].attrs,
				.granule = svm->ranges[i].granule,
				.location = svm->ranges[i].location,
			};
		mutex_unlock(&svm->lock);
	}
	return (void *)(attrs + rec->nr_attrs) - p;
}

/*
 * The most bytes session @s's record can take: its maps are held still by
 * its run_lock, its SVM ranges are not, so room for as many as a mirror
 * may have.
 */
static size_t accmap_ckpt_session_room(struct accmap_replay_session *s)
{
	return sizeof(struct accmap_ckpt_session) +
	       s->nr_maps * sizeof(struct accmap_replay_map) +
	       (s->svm ? ACCMAP_SVM_ATTR_RANGES_MAX *
			 sizeof(struct accmap_ckpt_svm_attr) : 0);
}

/*
 * The client's ids into a new buffer with @room bytes more after them,
 * under the client's lock, so that the records are the ids of one moment
 * whatever other threads create or free.  Returns the buffer (the head
 * filled but for size and sessions) or an ERR_PTR: -E2BIG for more ids
 * than a state may hold, -ENOMEM.
 */
static struct accmap_ckpt_client *accmap_ckpt_snap_ids(struct accmap_client *client,
						       size_t room)
{
	struct accmap_ckpt_client *head = ERR_PTR(-E2BIG);
	struct accmap_ckpt_handle *out;
	struct accmap_href *ref;
	struct rb_node *node;
	u32 n = 0;

	mutex_lock(&client->lock);
	if (client->handles.count > ACCMAP_CKPT_HANDLES_MAX)
		goto out_unlock;
	/* Sized by the process's ids: its ENOMEM, not a vmalloc warning. */
	head = kvzalloc(sizeof(*head) + room + client->handles.count *
			sizeof(struct accmap_ckpt_handle),
			GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!head) {
		head = ERR_PTR(-ENOMEM);
		goto out_unlock;
	}
	head->magic = ACCMAP_CKPT_MAGIC;
	head->version = ACCMAP_CKPT_VERSION;
	head->nr_handles = client->handles.count;
	head->pid = client->pid;
	head->next_id = client->handles.next_id;
	out = (void *)(head + 1);
	for (ref = accmap_htable_first(&client->handles); ref;
	     ref = node ? rb_entry(node, struct accmap_href, node) : NULL) {
		accmap_ckpt_fill_handle(client->adev, ref->handle, &out[n]);
		out[n].id = ref->id;
		if (ref->readonly)
			out[n].state |= ACCMAP_CKPT_H_ID_RDONLY;
		n++;
		node = rb_next(&ref->node);
	}
out_unlock:
	mutex_unlock(&client->lock);
	return head;
}

static int accmap_ckpt_state(struct accmap_client *client,
			     struct accmap_ckpt *arg)
{
	struct accmap_replay_session *sessions[ACCMAP_REPLAY_SESSIONS_MAX];
	struct accmap_device *adev = client->adev;
	u32 nr_sessions = 0, nr_locked = 0, i;
	struct accmap_ckpt_client *head;
	struct accmap_ckpt_idx *idx = NULL;
	struct accmap_replay_session *s;
	size_t room = 0, size;
	unsigned long index;
	void *p;
	ssize_t n;
	int ret = 0;

	if (arg->flags || arg->token || arg->contents || arg->fd || arg->pid)
		return -EINVAL;

	mutex_lock(&client->lock);
	if (client->ckpt_restore || client->ckpt_owned)
		ret = -EBUSY;
	mutex_unlock(&client->lock);
	if (ret) {
		arg->bad_kind = ACCMAP_CKPT_BAD_RESTORING;
		return ret;
	}

	/* Every session held still for the whole call: no run may start. */
	xa_lock(&client->sessions);
	xa_for_each(&client->sessions, index, s) {
		if (nr_sessions == ARRAY_SIZE(sessions))
			break;
		kref_get(&s->ref);
		sessions[nr_sessions++] = s;
	}
	xa_unlock(&client->sessions);

	for (i = 0; i < nr_sessions; i++) {
		s = sessions[i];
		if (!mutex_trylock(&s->run_lock)) {
			arg->bad_kind = ACCMAP_CKPT_BAD_SESSION_BUSY;
			arg->bad_id = s->id;
			ret = -EBUSY;
			goto out_unlock;
		}
		nr_locked++;
		if (s->target != &adev->sim_target) {
			arg->bad_kind = ACCMAP_CKPT_BAD_SESSION_MMIO;
			arg->bad_id = s->id;
			ret = -EOPNOTSUPP;
			goto out_unlock;
		}
		room += accmap_ckpt_session_room(s);
	}

	/*
	 * The state is made whole in the kernel, each part as it is at one
	 * moment, and then its size is known: the size a call with too
	 * little room is told is that of a state made then.
	 */
	head = accmap_ckpt_snap_ids(client, room);
	if (IS_ERR(head)) {
		ret = PTR_ERR(head);
		goto out_unlock;
	}
	head->nr_sessions = nr_sessions;
	head->next_session = client->next_session;
	if (nr_sessions) {
		idx = accmap_ckpt_index(head, &ret);
		if (ret)
			goto out_free;
	}
	p = (void *)(head + 1) +
	    head->nr_handles * sizeof(struct accmap_ckpt_handle);
	for (i = 0; i < nr_sessions; i++) {
		n = accmap_ckpt_fill_session(idx, head->nr_handles, sessions[i],
					     p);
		if (n < 0) {
			arg->bad_kind = ACCMAP_CKPT_BAD_SESSION_BUSY;
			arg->bad_id = sessions[i]->id;
			ret = n;
			goto out_free;
		}
		p += n;
	}
	size = p - (void *)head;
	head->size = size;
	if (arg->size < size)
		ret = -ENOSPC;
	else if (copy_to_user(u64_to_user_ptr(arg->data), head, size))
		ret = -EFAULT;
	arg->size = size;
out_free:
	kvfree(idx);
	kvfree(head);
out_unlock:
	for (i = 0; i < nr_locked; i++)
		mutex_unlock(&sessions[i]->run_lock);
	for (i = 0; i < nr_sessions; i++)
		accmap_replay_session_put(sessions[i]);
	return ret;
}

static int accmap_ckpt_dmabuf(struct accmap_client *client,
			      struct accmap_ckpt *arg)
{
	struct accmap_ckpt_handle rec;
	struct accmap_handle *handle;
	struct dma_buf *dmabuf;
	int ret = 0;

	if (arg->flags || arg->token || arg->contents || arg->pid)
		return -EINVAL;
	if (arg->data && arg->size < sizeof(rec))
		return -ENOSPC;

	dmabuf = dma_buf_get(arg->fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	handle = accmap_dmabuf_handle(dmabuf);
	if (!handle || handle->adev != client->adev) {
		ret = -EXDEV;
		goto out_put;
	}
	accmap_ckpt_fill_handle(client->adev, handle, &rec);
	arg->serial = rec.serial;
	arg->dmabuf_size = rec.size;
	arg->dmabuf_mode = dmabuf->file->f_mode & FMODE_WRITE ? O_RDWR :
								O_RDONLY;
	if (arg->data) {
		arg->size = sizeof(rec);
		if (copy_to_user(u64_to_user_ptr(arg->data), &rec, sizeof(rec)))
			ret = -EFAULT;
	}
out_put:
	dma_buf_put(dmabuf);
	return ret;
}

static int accmap_ckpt_begin(struct accmap_client *client,
			     struct accmap_ckpt *arg)
{
	struct accmap_device *adev = client->adev;
	struct accmap_ckpt_restore *r;

	if (arg->flags || arg->token || arg->data || arg->size ||
	    arg->contents || arg->fd || arg->pid)
		return -EINVAL;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	kref_init(&r->ref);
	r->adev = adev;
	mutex_init(&r->lock);
	xa_init(&r->bufs);
	INIT_LIST_HEAD(&r->members);
	INIT_LIST_HEAD(&r->clients);
	do {
		r->token = get_random_u64();
	} while (!r->token);

	mutex_lock(&client->lock);
	if (client->ckpt_owned || client->ckpt_restore) {
		mutex_unlock(&client->lock);
		accmap_ckpt_restore_put(r);
		return -EBUSY;
	}
	client->ckpt_owned = r;
	mutex_unlock(&client->lock);

	mutex_lock(&adev->restores_lock);
	list_add_tail(&r->node, &adev->restores);
	mutex_unlock(&adev->restores_lock);
	arg->token = r->token;
	return 0;
}

/*
 * The member of @r that joined with address space @mm, or NULL if none
 * did; the caller holds @r->lock, and the member lives as long as @r.
 */
static struct accmap_ckpt_member *accmap_ckpt_member(struct accmap_ckpt_restore *r,
						     struct mm_struct *mm)
{
	struct accmap_ckpt_member *m;

	lockdep_assert_held(&r->lock);
	list_for_each_entry(m, &r->members, node)
		if (m->mm == mm)
			return m;
	return NULL;
}

/*
 * The calling process joins @r: RESTORE_FINISH may then act on its memory.
 * Once per address space; its first pid namespace is the one kept.
 * Returns 0, -ESRCH for a caller without an address space, or -ENOMEM.
 */
static int accmap_ckpt_join(struct accmap_ckpt_restore *r)
{
	struct accmap_ckpt_member *m;

	if (!current->mm)
		return -ESRCH;
	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;
	mutex_lock(&r->lock);
	if (!accmap_ckpt_member(r, current->mm)) {
		mmgrab(current->mm);
		m->mm = current->mm;
		m->ns = get_pid_ns(task_active_pid_ns(current));
		m->tgid = get_pid(task_tgid(current));
		list_add_tail(&m->node, &r->members);
		m = NULL;
	}
	mutex_unlock(&r->lock);
	kfree(m);
	return 0;
}

static int accmap_ckpt_restore_client(struct accmap_client *client,
				      struct accmap_ckpt *arg)
{
	struct accmap_ckpt_client head;
	struct accmap_ckpt_restore *r;
	int ret = 0;

	if (arg->flags || arg->contents || arg->fd || arg->pid)
		return -EINVAL;
	if (arg->size != sizeof(head))
		return -EINVAL;
	if (copy_from_user(&head, u64_to_user_ptr(arg->data), sizeof(head)))
		return -EFAULT;
	if (head.magic != ACCMAP_CKPT_MAGIC ||
	    head.version != ACCMAP_CKPT_VERSION || head.pad || !head.next_id)
		return -EINVAL;

	r = accmap_ckpt_restore_get(client->adev, arg->token);
	if (!r)
		return -ENOENT;
	ret = accmap_ckpt_join(r);
	if (ret) {
		accmap_ckpt_restore_put(r);
		return ret;
	}
	mutex_lock(&r->lock);
	mutex_lock(&client->lock);
	if (client->ckpt_restore || client->ckpt_owned ||
	    client->handles.count || !xa_empty(&client->sessions)) {
		ret = -EBUSY;
	} else {
		client->handles.next_id = head.next_id;
		client->next_session = head.next_session;
		/* The client keeps the reference until RESTORE_FINISH. */
		client->ckpt_restore = r;
	}
	mutex_unlock(&client->lock);
	if (!ret)
		list_add_tail(&client->ckpt_node, &r->clients);
	mutex_unlock(&r->lock);
	if (ret)
		accmap_ckpt_restore_put(r);
	return ret;
}

/* Checks a record from user space; the serial is checked by the caller. */
static int accmap_ckpt_check_handle(const struct accmap_ckpt_handle *rec)
{
	struct accmap_tag_label label = { .tag = rec->tag };
	u64 end;

	if (!rec->size || !PAGE_ALIGNED(rec->size) ||
	    rec->size > ((u64)totalram_pages() << PAGE_SHIFT))
		return -EINVAL;
	if (rec->pad || rec->pad2 || rec->state & ~ACCMAP_CKPT_H_VALID)
		return -EINVAL;
	if (!memchr(rec->heap_name, '\0', sizeof(rec->heap_name)))
		return -EINVAL;
	memcpy(label.label, rec->label, sizeof(label.label));
	if (accmap_check_tag_label(&label))
		return -EINVAL;

	switch (rec->kind) {
	case ACCMAP_CKPT_KIND_EMPTY:
		if (rec->va || rec->flags || rec->origin_pid ||
		    rec->state & ~ACCMAP_CKPT_H_ID_RDONLY)
			return -EINVAL;
		break;
	case ACCMAP_CKPT_KIND_ALLOC:
		if (rec->va || rec->origin_pid ||
		    rec->flags & ~ACCMAP_ALLOC_VALID_FLAGS ||
		    rec->state & ACCMAP_CKPT_H_FROM_VA_WRITE)
			return -EINVAL;
		/* What ALLOC itself refuses (validate.c). */
		if ((rec->flags & ACCMAP_ALLOC_WRITECOMBINE) &&
		    (rec->flags & ACCMAP_ALLOC_UNCACHED))
			return -EINVAL;
		if ((rec->flags & ACCMAP_ALLOC_CONTIGUOUS) &&
		    accmap_check_contig_size(rec->size))
			return -EINVAL;
		break;
	case ACCMAP_CKPT_KIND_FROM_VA:
		if (rec->flags || !rec->origin_pid || !PAGE_ALIGNED(rec->va) ||
		    check_add_overflow(rec->va, rec->size, &end) ||
		    end > TASK_SIZE)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* The heap @rec's buffer came from: the one of the same name. */
static struct accmap_heap *accmap_ckpt_heap(struct accmap_device *adev,
					    const struct accmap_ckpt_handle *rec)
{
	int id;

	for (id = 0; id < ACCMAP_HEAP_MAX; id++) {
		struct accmap_heap *heap = adev->heaps[id];

		if (heap && heap->ops->alloc &&
		    !strcmp(heap->name, rec->heap_name))
			return heap;
	}
	return NULL;
}

/*
 * Makes @rec's buffer and enters it in @r's table; the caller holds
 * @r->lock.  @contents: user pointer to its bytes, or 0.
 */
static struct accmap_ckpt_buf *
accmap_ckpt_buf_create(struct accmap_ckpt_restore *r,
		       const struct accmap_ckpt_handle *rec, u64 contents)
{
	struct accmap_device *adev = r->adev;
	struct accmap_handle *handle;
	struct accmap_ckpt_buf *b;
	struct accmap_heap *heap;
	int ret;

	lockdep_assert_held(&r->lock);
	b = kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b)
		return ERR_PTR(-ENOMEM);
	handle = accmap_handle_create(adev, rec->size);
	if (!handle) {
		ret = -ENOMEM;
		goto err_free;
	}
	b->handle = handle;
	handle->ckpt_token = r->token;
	atomic_inc(&handle->hrefs);

	switch (rec->kind) {
	case ACCMAP_CKPT_KIND_ALLOC:
		heap = accmap_ckpt_heap(adev, rec);
		if (!heap) {
			ret = -ENODEV;
			goto err_put;
		}
		ret = accmap_handle_alloc(handle, heap, rec->flags, 0, rec->tag);
		if (ret)
			goto err_put;
		if (contents) {
			struct accmap_rw rw = {
				.addr = contents,
				.elem_size = rec->size,
				.count = 1,
			};

			ret = accmap_handle_rw(handle, &rw, true);
			if (ret)
				goto err_put;
		}
		break;
	case ACCMAP_CKPT_KIND_FROM_VA:
		if (contents) {
			ret = -EINVAL;
			goto err_put;
		}
		handle->readonly = !(rec->state & ACCMAP_CKPT_H_FROM_VA_WRITE);
		b->from_va = true;
		b->writable = !handle->readonly;
		b->va = rec->va;
		b->origin_pid = rec->origin_pid;
		b->tag = rec->tag;
		break;
	default:
		if (contents) {
			ret = -EINVAL;
			goto err_put;
		}
		break;
	}
	if (rec->label[0]) {
		ret = accmap_tag_set_label(adev, rec->tag, rec->label);
		if (ret)
			goto err_put;
	}
	ret = xa_insert(&r->bufs, rec->serial, b, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_put;
	return b;

err_put:
	accmap_handle_put_id(handle);
	accmap_handle_put(handle);
err_free:
	kfree(b);
	return ERR_PTR(ret);
}

/* The kind of a buffer the table holds, to match a later record against. */
static u32 accmap_ckpt_buf_kind(struct accmap_ckpt_buf *b)
{
	if (b->from_va)
		return ACCMAP_CKPT_KIND_FROM_VA;
	return accmap_handle_allocated(b->handle) ? ACCMAP_CKPT_KIND_ALLOC :
						    ACCMAP_CKPT_KIND_EMPTY;
}

/* Makes the dma-bufs of @exports (ACCMAP_CKPT_H_EXPORT_*) @handle keeps. */
static int accmap_ckpt_keep_exports(struct accmap_handle *handle, u32 exports)
{
	static const u32 bits[ACCMAP_EXPORT_MODES] = {
		[ACCMAP_EXPORT_RDONLY] = ACCMAP_CKPT_H_EXPORT_RDONLY,
		[ACCMAP_EXPORT_RDWR] = ACCMAP_CKPT_H_EXPORT_RDWR,
	};
	struct file *file;
	int mode;

	for (mode = 0; mode < ACCMAP_EXPORT_MODES; mode++) {
		if (!(exports & bits[mode]))
			continue;
		/* The handle keeps it (its slot): ours goes again. */
		file = accmap_dmabuf_get_file(handle, mode);
		if (IS_ERR(file))
			return PTR_ERR(file);
		fput(file);
	}
	return 0;
}

/*
 * Adds @rec's id for @handle to @client, with the dma-bufs the dumped
 * handle kept; a FROM_VA buffer gets those when it is pinned
 * (@b->exports).  @b is @r's entry for @handle, reached only under
 * @r->lock while @r is not dead (its end frees the entries).
 */
static int accmap_ckpt_add_id(struct accmap_client *client,
			      struct accmap_ckpt_restore *r,
			      struct accmap_ckpt_buf *b,
			      struct accmap_handle *handle,
			      const struct accmap_ckpt_handle *rec)
{
	u32 exports = rec->state & (ACCMAP_CKPT_H_EXPORT_RDONLY |
				    ACCMAP_CKPT_H_EXPORT_RDWR);
	int ret;

	if (!rec->id)
		return -EINVAL;
	ret = accmap_client_add_handle_at(client, handle,
					  rec->state & ACCMAP_CKPT_H_ID_RDONLY,
					  rec->id);
	if (ret)
		return ret;
	mutex_lock(&r->lock);
	if (r->dead) {
		ret = -ENOENT;
	} else if (b->from_va && !b->pinned) {
		b->exports |= exports;
		exports = 0;
	}
	mutex_unlock(&r->lock);
	if (!ret)
		ret = accmap_ckpt_keep_exports(handle, exports);
	if (ret)
		accmap_client_remove_handle(client, rec->id);
	return ret;
}

static int accmap_ckpt_restore_buffer(struct accmap_client *client,
				      struct accmap_ckpt *arg,
				      struct file **install_file,
				      int *install_fd)
{
	u32 fd_flags = arg->flags & (ACCMAP_CKPT_FD_RDONLY | ACCMAP_CKPT_FD_RDWR);
	struct accmap_ckpt_handle rec;
	struct accmap_handle *handle;
	struct accmap_ckpt_restore *r;
	struct accmap_ckpt_buf *b;
	struct file *file;
	int fd, ret;

	if (arg->flags & ~ACCMAP_CKPT_VALID_FLAGS || arg->fd || arg->pid ||
	    fd_flags == (ACCMAP_CKPT_FD_RDONLY | ACCMAP_CKPT_FD_RDWR) ||
	    (!fd_flags && !(arg->flags & ACCMAP_CKPT_ADD_ID)) ||
	    (!fd_flags && arg->flags & ACCMAP_CKPT_FD_CLOEXEC))
		return -EINVAL;
	if (arg->size != sizeof(rec))
		return -EINVAL;
	if (copy_from_user(&rec, u64_to_user_ptr(arg->data), sizeof(rec)))
		return -EFAULT;
	ret = accmap_ckpt_check_handle(&rec);
	if (ret)
		return ret;
	if (!rec.serial || rec.serial > ULONG_MAX)
		return -EINVAL;

	r = accmap_ckpt_restore_get(client->adev, arg->token);
	if (!r)
		return -ENOENT;
	if (arg->flags & ACCMAP_CKPT_ADD_ID) {
		mutex_lock(&client->lock);
		ret = client->ckpt_restore == r ? 0 : -EINVAL;
		mutex_unlock(&client->lock);
		if (ret)
			goto out_put_restore;
	}

	mutex_lock(&r->lock);
	b = r->dead ? ERR_PTR(-ENOENT) : xa_load(&r->bufs, rec.serial);
	if (!b)
		b = accmap_ckpt_buf_create(r, &rec, arg->contents);
	else if (!IS_ERR(b) && (b->handle->size != rec.size ||
				accmap_ckpt_buf_kind(b) != rec.kind))
		b = ERR_PTR(-EINVAL);
	if (IS_ERR(b)) {
		mutex_unlock(&r->lock);
		ret = PTR_ERR(b);
		goto out_put_restore;
	}
	handle = b->handle;
	accmap_handle_get(handle);
	/* The most a mapping through the restore may do (may_map). */
	if ((arg->flags & ACCMAP_CKPT_ADD_ID &&
	     !(rec.state & ACCMAP_CKPT_H_ID_RDONLY)) ||
	    fd_flags & ACCMAP_CKPT_FD_RDWR)
		WRITE_ONCE(handle->ckpt_rdwr, true);
	mutex_unlock(&r->lock);

	if (arg->flags & ACCMAP_CKPT_ADD_ID) {
		ret = accmap_ckpt_add_id(client, r, b, handle, &rec);
		if (ret)
			goto out_put_handle;
	}
	if (fd_flags) {
		fd = get_unused_fd_flags(arg->flags & ACCMAP_CKPT_FD_CLOEXEC ?
					 O_CLOEXEC : 0);
		if (fd < 0) {
			ret = fd;
			goto out_remove_id;
		}
		file = accmap_dmabuf_get_file(handle,
					      fd_flags & ACCMAP_CKPT_FD_RDWR ?
					      ACCMAP_EXPORT_RDWR :
					      ACCMAP_EXPORT_RDONLY);
		if (IS_ERR(file)) {
			put_unused_fd(fd);
			ret = PTR_ERR(file);
			goto out_remove_id;
		}
		/* Installed by the dispatcher once user space has the number. */
		*install_file = file;
		*install_fd = fd;
		arg->fd = fd;
	}
	ret = 0;
	goto out_put_handle;

out_remove_id:
	if (arg->flags & ACCMAP_CKPT_ADD_ID)
		accmap_client_remove_handle(client, rec.id);
out_put_handle:
	accmap_handle_put(handle);
out_put_restore:
	accmap_ckpt_restore_put(r);
	return ret;
}

static int accmap_ckpt_restore_session(struct accmap_client *client,
				       struct accmap_ckpt *arg)
{
	struct accmap_ckpt_pending *p, *q;
	void __user *src = u64_to_user_ptr(arg->data);
	struct accmap_ckpt_restore *r;
	size_t maps_size, attrs_size;
	int ret = 0;

	if (arg->flags || arg->contents || arg->fd || arg->pid)
		return -EINVAL;
	if (arg->size < sizeof(p->rec))
		return -EINVAL;
	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return -ENOMEM;
	if (copy_from_user(&p->rec, src, sizeof(p->rec))) {
		ret = -EFAULT;
		goto err_free;
	}
	if (p->rec.nr_maps > ACCMAP_REPLAY_MAPS_MAX ||
	    p->rec.nr_attrs > ACCMAP_SVM_ATTR_RANGES_MAX) {
		ret = -EINVAL;
		goto err_free;
	}
	maps_size = p->rec.nr_maps * sizeof(*p->maps);
	attrs_size = p->rec.nr_attrs * sizeof(*p->attrs);
	if (arg->size != sizeof(p->rec) + maps_size + attrs_size) {
		ret = -EINVAL;
		goto err_free;
	}
	p->maps = kvmalloc(max_t(size_t, maps_size, 1),
			   GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	p->attrs = kvmalloc(max_t(size_t, attrs_size, 1),
			    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!p->maps || !p->attrs) {
		ret = -ENOMEM;
		goto err_free;
	}
	if (copy_from_user(p->maps, src + sizeof(p->rec), maps_size) ||
	    copy_from_user(p->attrs, src + sizeof(p->rec) + maps_size,
			   attrs_size)) {
		ret = -EFAULT;
		goto err_free;
	}
	/* What the record alone says is refused now, not at FINISH. */
	ret = accmap_replay_check_restore(client->adev, &p->rec);
	if (ret)
		goto err_free;

	/* As for the other ops: no such restore, then not this client's. */
	r = accmap_ckpt_restore_get(client->adev, arg->token);
	if (!r) {
		ret = -ENOENT;
		goto err_free;
	}
	mutex_lock(&client->lock);
	if (client->ckpt_restore != r)
		ret = -EINVAL;
	list_for_each_entry(q, &client->ckpt_sessions, node)
		if (q->rec.id == p->rec.id)
			ret = -EEXIST;
	if (!ret)
		list_add_tail(&p->node, &client->ckpt_sessions);
	mutex_unlock(&client->lock);
	accmap_ckpt_restore_put(r);
	if (ret)
		goto err_free;
	return 0;

err_free:
	accmap_ckpt_pending_free(p);
	return ret;
}

/*
 * Pins the FROM_VA buffers @r made of the memory of @task, whose address
 * space @mm joined @r from pid namespace @ns, where the dumped pids are.
 */
static int accmap_ckpt_pin(struct accmap_ckpt_restore *r,
			   struct task_struct *task, struct pid_namespace *ns,
			   struct mm_struct *mm, u32 *done)
{
	u32 pid = task_tgid_nr_ns(task, ns);
	struct accmap_ckpt_buf *b;
	unsigned long serial;
	int ret = 0;

	mutex_lock(&r->lock);
	xa_for_each(&r->bufs, serial, b) {
		if (!b->from_va || b->pinned || b->origin_pid != pid)
			continue;
		ret = accmap_handle_pin_va(b->handle, mm, task_tgid(task), b->va,
					   b->writable, b->tag);
		if (!ret)
			ret = accmap_ckpt_keep_exports(b->handle, b->exports);
		if (ret)
			break;
		b->pinned = true;
		(*done)++;
	}
	mutex_unlock(&r->lock);
	return ret;
}

/*
 * Makes the queued sessions in @r of the clients process @tgid (in the
 * initial pid namespace, as client->pid) opened; they leave @r.  Under
 * @r->lock, which keeps those clients from being freed (their release
 * waits for it), and no lock every open() and close() of the device takes.
 */
static int accmap_ckpt_sessions(struct accmap_ckpt_restore *r, pid_t tgid,
				struct mm_struct *mm, u32 *done)
{
	struct accmap_ckpt_pending *p, *next;
	struct accmap_client *c, *cnext;
	int ret = 0;

	mutex_lock(&r->lock);
	list_for_each_entry_safe(c, cnext, &r->clients, ckpt_node) {
		LIST_HEAD(todo);

		if (c->pid != tgid)
			continue;
		mutex_lock(&c->lock);
		list_splice_init(&c->ckpt_sessions, &todo);
		mutex_unlock(&c->lock);

		list_for_each_entry_safe(p, next, &todo, node) {
			if (!ret) {
				ret = accmap_replay_restore(c, &p->rec, p->maps,
							    p->attrs, mm);
				if (!ret)
					(*done)++;
			}
			list_del(&p->node);
			accmap_ckpt_pending_free(p);
		}
		list_del_init(&c->ckpt_node);
		mutex_lock(&c->lock);
		c->ckpt_restore = NULL;
		mutex_unlock(&c->lock);
		/* The client's reference; the caller's keeps @r. */
		accmap_ckpt_restore_put(r);
	}
	mutex_unlock(&r->lock);
	return ret;
}

static int accmap_ckpt_finish(struct accmap_client *client,
			      struct accmap_ckpt *arg)
{
	struct accmap_ckpt_member *member;
	struct accmap_ckpt_restore *r;
	struct task_struct *task;
	struct mm_struct *mm;
	int ret;

	if (arg->flags || arg->data || arg->size || arg->contents || arg->fd ||
	    !arg->pid)
		return -EINVAL;
	mutex_lock(&client->lock);
	r = client->ckpt_owned;
	mutex_unlock(&client->lock);
	if (!r || r->token != arg->token) {
		/* No such restore, or one another client began. */
		r = accmap_ckpt_restore_get(client->adev, arg->token);
		if (!r)
			return -ENOENT;
		accmap_ckpt_restore_put(r);
		return -EINVAL;
	}

	/* @arg->pid is a number in the caller's pid namespace. */
	rcu_read_lock();
	task = pid_task(find_vpid(arg->pid), PIDTYPE_PID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	if (!task)
		return -ESRCH;
	mm = get_task_mm(task);
	if (!mm) {
		ret = -ESRCH;
		goto out_put_task;
	}

	/* Only a process that joined the restore itself: nothing else. */
	mutex_lock(&r->lock);
	member = accmap_ckpt_member(r, mm);
	mutex_unlock(&r->lock);
	if (!member) {
		ret = -EPERM;
		goto out_mmput;
	}
	arg->done = 0;
	ret = accmap_ckpt_pin(r, task, member->ns, mm, &arg->done);
	if (!ret)
		ret = accmap_ckpt_sessions(r, task_tgid_nr(task), mm,
					   &arg->done);
	if (!ret) {
		mutex_lock(&r->lock);
		member->finished = true;
		mutex_unlock(&r->lock);
	}
out_mmput:
	mmput(mm);
out_put_task:
	put_task_struct(task);
	return ret;
}

/*
 * Whether a member of @r that has not finished yet has @origin_pid in the
 * pid namespace it joined from: its RESTORE_FINISH may pin such a buffer.
 */
static bool accmap_ckpt_pinner_to_come(struct accmap_ckpt_restore *r,
				       u32 origin_pid)
{
	struct accmap_ckpt_member *m;

	lockdep_assert_held(&r->lock);
	list_for_each_entry(m, &r->members, node)
		if (!m->finished && pid_nr_ns(m->tgid, m->ns) == origin_pid)
			return true;
	return false;
}

/* Whether a member of @r that has not finished yet is thread group @tgid. */
static bool accmap_ckpt_maker_to_come(struct accmap_ckpt_restore *r,
				      pid_t tgid)
{
	struct accmap_ckpt_member *m;

	lockdep_assert_held(&r->lock);
	list_for_each_entry(m, &r->members, node)
		if (!m->finished && pid_nr(m->tgid) == tgid)
			return true;
	return false;
}

/*
 * RESTORE_LEFT: counts in @arg->done what of the restore no RESTORE_FINISH
 * still to come will make, and names the first: a FROM_VA buffer whose
 * process is not a member waiting for its FINISH, then a queued session
 * whose client's process is not.
 */
static int accmap_ckpt_left(struct accmap_client *client,
			    struct accmap_ckpt *arg)
{
	struct accmap_device *adev = client->adev;
	struct accmap_ckpt_restore *r;
	struct accmap_ckpt_pending *p;
	struct accmap_ckpt_buf *b;
	struct accmap_client *c;
	unsigned long serial;

	if (arg->flags || arg->data || arg->size || arg->contents || arg->fd ||
	    arg->pid || arg->serial || arg->map_offset)
		return -EINVAL;
	mutex_lock(&client->lock);
	r = client->ckpt_owned;
	mutex_unlock(&client->lock);
	if (!r || r->token != arg->token) {
		/* No such restore, or one another client began. */
		r = accmap_ckpt_restore_get(adev, arg->token);
		if (!r)
			return -ENOENT;
		accmap_ckpt_restore_put(r);
		return -EINVAL;
	}

	/* The caller's file holds @r: it cannot end during the call. */
	mutex_lock(&r->lock);
	xa_for_each(&r->bufs, serial, b) {
		if (!b->from_va || b->pinned ||
		    accmap_ckpt_pinner_to_come(r, b->origin_pid))
			continue;
		if (!arg->done++) {
			arg->bad_kind = ACCMAP_CKPT_BAD_NO_PINNER;
			arg->serial = serial;
			arg->bad_id = b->origin_pid;
		}
	}

	list_for_each_entry(c, &r->clients, ckpt_node) {
		u32 first = 0, n = 0;

		mutex_lock(&c->lock);
		list_for_each_entry(p, &c->ckpt_sessions, node)
			if (!n++)
				first = p->rec.id;
		mutex_unlock(&c->lock);
		if (!n || accmap_ckpt_maker_to_come(r, c->pid))
			continue;
		if (!arg->done) {
			arg->bad_kind = ACCMAP_CKPT_BAD_NO_MAKER;
			arg->bad_id = first;
		}
		arg->done += n;
	}
	mutex_unlock(&r->lock);
	return 0;
}

/*
 * The buffer @r made for dumped serial @serial, with a reference, if
 * @client is being restored by @r; else NULL.
 */
static struct accmap_handle *accmap_ckpt_restored(struct accmap_client *client,
						  u64 serial)
{
	struct accmap_handle *handle = NULL;
	struct accmap_ckpt_restore *r;
	struct accmap_ckpt_buf *b;

	mutex_lock(&client->lock);
	r = client->ckpt_restore;
	if (r)
		kref_get(&r->ref);
	mutex_unlock(&client->lock);
	if (!r)
		return NULL;

	mutex_lock(&r->lock);
	b = r->dead || serial > ULONG_MAX ? NULL : xa_load(&r->bufs, serial);
	if (b) {
		handle = b->handle;
		accmap_handle_get(handle);
	}
	mutex_unlock(&r->lock);
	accmap_ckpt_restore_put(r);
	return handle;
}

static int accmap_ckpt_restore_offset(struct accmap_client *client,
				      struct accmap_ckpt *arg)
{
	struct accmap_ckpt_restore *r;
	struct accmap_handle *handle;
	int ret;

	if (arg->flags || arg->data || arg->size || arg->contents || arg->fd ||
	    arg->pid)
		return -EINVAL;
	/* As for the other ops: no such restore, then not this client's. */
	r = accmap_ckpt_restore_get(client->adev, arg->token);
	if (!r)
		return -ENOENT;
	mutex_lock(&client->lock);
	ret = client->ckpt_restore == r ? 0 : -EINVAL;
	mutex_unlock(&client->lock);
	accmap_ckpt_restore_put(r);
	if (ret)
		return ret;
	handle = accmap_ckpt_restored(client, arg->serial);
	if (!handle)
		return -ENOENT;
	ret = accmap_handle_map_offset(handle, &arg->map_offset);
	accmap_handle_put(handle);
	return ret;
}

/**
 * accmap_checkpoint_may_map() - whether a client being restored may map
 * a buffer it has no id for
 * @client: the client
 * @handle: the buffer
 *
 * @readonly: set to whether the mapping may only read: the restore was
 *            given no writable id and no read-write dma-buf of @handle
 *
 * A mapping can outlive the ids of its buffer; its restore goes through
 * a file of the restored process that is being restored, which may map
 * any buffer its restore made, until RESTORE_FINISH of that process or
 * the end of the restore, whichever comes first, and never with more
 * right than the dumped ids or dma-bufs had.  Called under the mmap_lock,
 * so it takes no restore's lock (those are held around copies from user
 * space and pinning).
 *
 * Return: true if @client is being restored, its restore has not ended
 * and it made @handle.
 */
bool accmap_checkpoint_may_map(struct accmap_client *client,
			       struct accmap_handle *handle, bool *readonly)
{
	bool ok = false;

	mutex_lock(&client->lock);
	/* The client's reference keeps the restore. */
	if (client->ckpt_restore && !READ_ONCE(client->ckpt_restore->dead))
		ok = handle->ckpt_token == client->ckpt_restore->token;
	mutex_unlock(&client->lock);
	if (ok)
		*readonly = !READ_ONCE(handle->ckpt_rdwr);
	return ok;
}

/**
 * accmap_checkpoint() - ACCMAP_IOC_CHECKPOINT
 * @client: the calling file's client
 * @arg: the argument, in kernel memory; copied back on failure too
 * @install_file: set to a dma-buf file to install as @install_fd
 *                (RESTORE_BUFFER with a FD flag)
 * @install_fd: set to the reserved descriptor for it
 *
 * Return: 0 or a negative errno as documented for ACCMAP_IOC_CHECKPOINT.
 */
int accmap_checkpoint(struct accmap_client *client, struct accmap_ckpt *arg,
		      struct file **install_file, int *install_fd)
{
	u32 op = arg->op;

	if (!accmap_ckpt_capable())
		return -EPERM;
	if (arg->pad)
		return -EINVAL;
	arg->bad_kind = ACCMAP_CKPT_BAD_NONE;
	arg->bad_id = 0;
	arg->done = 0;

	switch (op) {
	case ACCMAP_CKPT_OP_STATE:
		return accmap_ckpt_state(client, arg);
	case ACCMAP_CKPT_OP_DMABUF:
		return accmap_ckpt_dmabuf(client, arg);
	case ACCMAP_CKPT_OP_RESTORE_BEGIN:
		return accmap_ckpt_begin(client, arg);
	case ACCMAP_CKPT_OP_RESTORE_CLIENT:
		return accmap_ckpt_restore_client(client, arg);
	case ACCMAP_CKPT_OP_RESTORE_BUFFER:
		return accmap_ckpt_restore_buffer(client, arg, install_file,
						  install_fd);
	case ACCMAP_CKPT_OP_RESTORE_SESSION:
		return accmap_ckpt_restore_session(client, arg);
	case ACCMAP_CKPT_OP_RESTORE_FINISH:
		return accmap_ckpt_finish(client, arg);
	case ACCMAP_CKPT_OP_RESTORE_OFFSET:
		return accmap_ckpt_restore_offset(client, arg);
	case ACCMAP_CKPT_OP_RESTORE_LEFT:
		return accmap_ckpt_left(client, arg);
	default:
		return -EINVAL;
	}
}
