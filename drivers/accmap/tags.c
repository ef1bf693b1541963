// SPDX-License-Identifier: GPL-2.0
/*
 * accmap: names of accounting tags.
 *
 * ALLOC carries a 16-bit tag; SET_TAG_LABEL gives a tag a name that
 * debugfs shows beside the tag.  Names are shared by all clients.
 */

#include <linux/ctype.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "accmap.h"

/**
 * accmap_check_tag_label() - validate an ACCMAP_IOC_SET_TAG_LABEL argument
 * @arg: the argument
 *
 * Return: 0, or -EINVAL for non-zero padding or flags, a label with no
 * terminating NUL, a character that is not printable ASCII, or a non-zero
 * byte after the NUL.
 */
int accmap_check_tag_label(const struct accmap_tag_label *arg)
{
	const char *nul;
	size_t i, len;

	if (arg->pad || arg->flags & ~ACCMAP_TAG_LABEL_VALID_FLAGS)
		return -EINVAL;
	nul = memchr(arg->label, '\0', sizeof(arg->label));
	if (!nul)
		return -EINVAL;
	len = nul - arg->label;
	for (i = 0; i < len; i++)
		if (arg->label[i] < 0x20 || arg->label[i] > 0x7e)
			return -EINVAL;
	for (i = len + 1; i < sizeof(arg->label); i++)
		if (arg->label[i])
			return -EINVAL;
	return 0;
}

/**
 * accmap_tag_set_label() - name a tag, or remove its name
 * @adev: the device
 * @tag: the tag
 * @label: the name, already validated; "" removes it
 *
 * Return: 0 or -ENOMEM.
 */
int accmap_tag_set_label(struct accmap_device *adev, u16 tag, const char *label)
{
	char *copy = NULL, *old;
	int ret = 0;

	if (*label) {
		copy = kstrdup(label, GFP_KERNEL_ACCOUNT);
		if (!copy)
			return -ENOMEM;
	}

	mutex_lock(&adev->tags_lock);
	if (copy) {
		old = xa_store(&adev->tag_labels, tag, copy, GFP_KERNEL);
		if (xa_is_err(old)) {
			ret = xa_err(old);
			old = copy;
		}
	} else {
		old = xa_erase(&adev->tag_labels, tag);
	}
	mutex_unlock(&adev->tags_lock);

	kfree(old);
	return ret;
}

/**
 * accmap_tag_get_label() - copy a tag's name
 * @adev: the device
 * @tag: the tag
 * @buf: ACCMAP_LABEL_LEN bytes; set to the name, or "" if it has none
 */
void accmap_tag_get_label(struct accmap_device *adev, u16 tag, char *buf)
{
	const char *label;

	mutex_lock(&adev->tags_lock);
	label = xa_load(&adev->tag_labels, tag);
	strscpy(buf, label ? label : "", ACCMAP_LABEL_LEN);
	mutex_unlock(&adev->tags_lock);
}

/**
 * accmap_tags_destroy() - free every tag name
 * @adev: the device, being torn down
 */
void accmap_tags_destroy(struct accmap_device *adev)
{
	unsigned long tag;
	char *label;

	xa_for_each(&adev->tag_labels, tag, label)
		kfree(label);
	xa_destroy(&adev->tag_labels);
}
