/* SPDX-License-Identifier: MIT */
/*
 * Access to the dynamic fields of the record __entry, for the stages that compile
 * TP_fast_assign (stage 6) and TP_printk (stage 3).  Private to usertp's headers.
 */
#define __get_dynamic_array(field)                                                                 \
	((void *)((char *)(__entry) + (__entry->__data_loc_##field & 0xffff)))
#define __get_dynamic_array_len(field) ((int)((__entry->__data_loc_##field >> 16) & 0xffff))
#define __get_str(field) ((char *)__get_dynamic_array(field))
#define __get_rel_dynamic_array(field)                                                             \
	((void *)((char *)&__entry->__rel_loc_##field + sizeof(uint32_t) +                         \
		  (__entry->__rel_loc_##field & 0xffff)))
#define __get_rel_dynamic_array_len(field) ((int)((__entry->__rel_loc_##field >> 16) & 0xffff))
#define __get_rel_str(field) ((char *)__get_rel_dynamic_array(field))
