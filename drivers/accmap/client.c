// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: clients, one per open file of /dev/accmap, and their handle
 * references.
 */

#include <linux/dma-buf.h>
#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "accmap.h"

/**
 * accmap_client_create() - create the client of a newly opened file
 * @adev: the device
 *
 * Return: the client, listed in @adev, or NULL if out of memory.
 */
struct accmap_client *accmap_client_create(struct accmap_device *adev)
{
	struct accmap_client *client;

	client = kzalloc(sizeof(*client), GFP_KERNEL_ACCOUNT);
	if (!client)
		return NULL;

	client->adev = adev;
	client->pid = task_tgid_nr(current);
	accmap_get_comm(client->comm);
	mutex_init(&client->lock);
	accmap_htable_init(&client->handles, &client->lock);
	accmap_replay_client_init(client);
	INIT_LIST_HEAD(&client->ckpt_node);
	INIT_LIST_HEAD(&client->ckpt_sessions);

	mutex_lock(&adev->clients_lock);
	list_add_tail(&client->node, &adev->clients);
	mutex_unlock(&adev->clients_lock);
	return client;
}

/**
 * accmap_client_destroy() - drop everything a client holds and free it
 * @client: the client of a file being released
 */
void accmap_client_destroy(struct accmap_client *client)
{
	struct accmap_device *adev = client->adev;
	struct accmap_href *ref;

	mutex_lock(&adev->clients_lock);
	list_del(&client->node);
	mutex_unlock(&adev->clients_lock);

	/* A restore it began or was part of ends here. */
	accmap_checkpoint_client_fini(client);
	/* Sessions first: they hold references on the client's buffers. */
	accmap_replay_client_fini(client);

	/*
	 * Off the list and its file gone: nobody else can reach the table,
	 * but the table's rule holds all the same (lockdep checks it), and
	 * the lock is not held across the puts, which may free memory.
	 */
	for (;;) {
		mutex_lock(&client->lock);
		ref = accmap_htable_first(&client->handles);
		if (ref)
			accmap_htable_erase(&client->handles, ref);
		mutex_unlock(&client->lock);
		if (!ref)
			break;
		accmap_handle_put_id(ref->handle);
		accmap_handle_put(ref->handle);
		kfree(ref);
		cond_resched();
	}
	accmap_htable_destroy(&client->handles);
	mutex_destroy(&client->lock);
	kfree(client);
}

/**
 * accmap_client_get_handle_ro() - look up a handle by id, with its access
 * @client: the client
 * @id: the id
 * @readonly: set to whether this id may not write the buffer, if found
 *
 * Return: the handle with a reference for the caller, or NULL if @client
 * has no handle with that id.
 */
struct accmap_handle *accmap_client_get_handle_ro(struct accmap_client *client,
						  u32 id, bool *readonly)
{
	struct accmap_handle *handle = NULL;
	struct accmap_href *ref;

	mutex_lock(&client->lock);
	ref = accmap_htable_lookup(&client->handles, id);
	if (ref) {
		handle = ref->handle;
		accmap_handle_get(handle);
		*readonly = ref->readonly || handle->readonly;
	}
	mutex_unlock(&client->lock);
	return handle;
}

/**
 * accmap_client_get_handle() - look up a handle by id
 * @client: the client
 * @id: the id
 *
 * Return: the handle with a reference for the caller, or NULL if @client
 * has no handle with that id.
 */
struct accmap_handle *accmap_client_get_handle(struct accmap_client *client,
					       u32 id)
{
	bool readonly;

	return accmap_client_get_handle_ro(client, id, &readonly);
}

/**
 * accmap_client_handle_access() - whether a client holds an id for a buffer
 * @client: the client
 * @handle: the handle; the caller holds a reference
 * @readonly: set to whether no id of @client for @handle may write it,
 *            if there is one
 *
 * The table is keyed by id, so this walks all of the client's ids: O(ids),
 * paid once per mmap() of /dev/accmap, not per fault.  A second index by
 * handle would make it O(log ids) for a node per id.
 *
 * Return: 0, or -EACCES if @client holds no id for @handle.
 */
int accmap_client_handle_access(struct accmap_client *client,
				struct accmap_handle *handle, bool *readonly)
{
	struct accmap_href *ref;
	struct rb_node *node;
	int ret = -EACCES;

	*readonly = true;
	mutex_lock(&client->lock);
	for (node = rb_first(&client->handles.root); node; node = rb_next(node)) {
		ref = rb_entry(node, struct accmap_href, node);
		if (ref->handle != handle)
			continue;
		ret = 0;
		if (!ref->readonly && !handle->readonly) {
			*readonly = false;
			break;
		}
	}
	mutex_unlock(&client->lock);
	return ret;
}

/* @at: the id to insert at (restore), or 0 for the next free one */
static int accmap_client_add(struct accmap_client *client,
			     struct accmap_handle *handle, bool readonly,
			     struct dma_buf *from, u32 at, u32 *id)
{
	struct accmap_href *ref;
	int ret;

	ref = kzalloc(sizeof(*ref), GFP_KERNEL_ACCOUNT);
	if (!ref)
		return -ENOMEM;
	ref->handle = handle;
	ref->readonly = readonly;

	mutex_lock(&client->lock);
	if (at)
		ret = accmap_htable_insert_at(&client->handles, ref, at);
	else
		ret = accmap_htable_insert(&client->handles, ref);
	if (!ret) {
		accmap_handle_get(handle);
		atomic_inc(&handle->hrefs);
		/*
		 * Before another thread can look the id up: a GET_FD through
		 * it must find the dma-buf it came from, not export another.
		 */
		if (from)
			accmap_dmabuf_adopt(handle, from);
		*id = ref->id;
	}
	mutex_unlock(&client->lock);

	if (ret)
		kfree(ref);
	return ret;
}

/**
 * accmap_client_add_handle() - give a client a new reference to a handle
 * @client: the client
 * @handle: the handle; the new reference takes one handle reference of
 *          its own
 * @readonly: the new id may not write the buffer
 * @id: set to the new reference's id
 *
 * Return: 0, -ENOMEM, or -ENOSPC if the client's id space is full.
 */
int accmap_client_add_handle(struct accmap_client *client,
			     struct accmap_handle *handle, bool readonly,
			     u32 *id)
{
	return accmap_client_add(client, handle, readonly, NULL, 0, id);
}

/**
 * accmap_client_add_handle_at() - give a client a reference at a given id
 * @client: the client
 * @handle: the handle; the new reference takes one handle reference
 * @readonly: the new id may not write the buffer
 * @id: the id, not 0
 *
 * For a restore, where ids are the restored program's state.
 *
 * Return: 0, -ENOMEM, or -EEXIST if @id is taken.
 */
int accmap_client_add_handle_at(struct accmap_client *client,
				struct accmap_handle *handle, bool readonly,
				u32 id)
{
	u32 got;

	return accmap_client_add(client, handle, readonly, NULL, id, &got);
}

/**
 * accmap_client_add_dmabuf() - give a client an id for an accmap dma-buf
 * @client: the client
 * @handle: the handle behind @dmabuf
 * @dmabuf: an accmap dma-buf; the caller holds a reference
 * @id: set to the new reference's id
 *
 * The new id is read-only unless @dmabuf was opened for writing, and the
 * handle keeps @dmabuf for its mode if it keeps none (accmap_dmabuf_adopt()).
 *
 * Return: 0, -ENOMEM, or -ENOSPC if the client's id space is full.
 */
int accmap_client_add_dmabuf(struct accmap_client *client,
			     struct accmap_handle *handle,
			     struct dma_buf *dmabuf, u32 *id)
{
	return accmap_client_add(client, handle,
				 !(dmabuf->file->f_mode & FMODE_WRITE), dmabuf,
				 0, id);
}

/**
 * accmap_client_remove_handle() - drop a client's reference by id
 * @client: the client
 * @id: the id; it is stale from now on
 *
 * Return: 0, or -ENOENT if @client has no handle with that id.
 */
int accmap_client_remove_handle(struct accmap_client *client, u32 id)
{
	struct accmap_href *ref;

	mutex_lock(&client->lock);
	ref = accmap_htable_lookup(&client->handles, id);
	if (ref)
		accmap_htable_erase(&client->handles, ref);
	mutex_unlock(&client->lock);
	if (!ref)
		return -ENOENT;

	accmap_handle_put_id(ref->handle);
	accmap_handle_put(ref->handle);
	kfree(ref);
	return 0;
}
