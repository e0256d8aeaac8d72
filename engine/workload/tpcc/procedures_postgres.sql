-- dbduel's TPC-C transactions as PostgreSQL functions in PL/pgSQL: one
-- SELECT a transaction (one round trip), as HammerDB's TPROC-C runs them.
-- Written from the TPC-C specification's transaction profiles (clauses 2.4
-- to 2.8), with the same reads and writes as procedures_mysql.sql; the
-- client draws the inputs (the same draws as the statements mode). A
-- function runs inside the transaction of the statement that calls it (the
-- SELECT's own), and returns rolled_back: 1 for New-Order's 1% of unused
-- items, whose work is undone inside (a function cannot end its
-- transaction: the body runs in a block whose exception handler rolls it
-- back). Functions are separated by a line holding only "-- next procedure".

CREATE FUNCTION dbduel_tpcc_new_order(p_w INT, p_d INT, p_c INT, p_ol_cnt INT, p_all_local INT,
	p_items TEXT, p_supply TEXT, p_qty TEXT, p_entry TIMESTAMP) RETURNS INT LANGUAGE plpgsql AS $$
DECLARE
	v_discount NUMERIC(4,4);
	v_last VARCHAR(16);
	v_credit CHAR(2);
	v_wtax NUMERIC(4,4);
	v_dtax NUMERIC(4,4);
	v_oid INT;
	v_sq INT;
	v_price NUMERIC(5,2);
	v_iname VARCHAR(24);
	v_idata VARCHAR(50);
	v_sdata VARCHAR(50);
	v_dist CHAR(24);
	items INT[] := string_to_array(p_items, ',')::INT[];
	supply INT[] := string_to_array(p_supply, ',')::INT[];
	qty INT[] := string_to_array(p_qty, ',')::INT[];
BEGIN
	SELECT c_discount, c_last, c_credit, w_tax INTO v_discount, v_last, v_credit, v_wtax
		FROM customer, warehouse WHERE w_id = p_w AND c_w_id = w_id AND c_d_id = p_d AND c_id = p_c;
	SELECT d_next_o_id, d_tax INTO v_oid, v_dtax FROM district WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
	UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
	INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (v_oid, p_d, p_w, p_c, p_entry, NULL, p_ol_cnt, p_all_local);
	INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_oid, p_d, p_w);
	FOR i IN 1..p_ol_cnt LOOP
		-- Clause 2.4.2.3: an unused item number rolls the order back
		-- (STRICT raises no_data_found, handled below).
		SELECT i_price, i_name, i_data INTO STRICT v_price, v_iname, v_idata FROM item WHERE i_id = items[i];
		SELECT s_quantity, s_data,
			CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
				WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
				WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
			INTO v_sq, v_sdata, v_dist FROM stock WHERE s_i_id = items[i] AND s_w_id = supply[i] FOR UPDATE;
		UPDATE stock SET s_quantity = CASE WHEN v_sq < qty[i] + 10 THEN v_sq - qty[i] + 91 ELSE v_sq - qty[i] END,
			s_ytd = s_ytd + qty[i], s_order_cnt = s_order_cnt + 1,
			s_remote_cnt = s_remote_cnt + CASE WHEN supply[i] <> p_w THEN 1 ELSE 0 END
			WHERE s_i_id = items[i] AND s_w_id = supply[i];
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
			VALUES (v_oid, p_d, p_w, i, items[i], supply[i], NULL, qty[i], qty[i] * v_price, v_dist);
	END LOOP;
	RETURN 0;
EXCEPTION WHEN no_data_found THEN
	-- Everything this call did is rolled back with the block.
	RETURN 1;
END
$$
-- next procedure
CREATE FUNCTION dbduel_tpcc_payment(p_w INT, p_d INT, p_cw INT, p_cd INT, p_c INT,
	p_by_name INT, p_last VARCHAR(16), p_amount NUMERIC(6,2), p_date TIMESTAMP) RETURNS INT LANGUAGE plpgsql AS $$
DECLARE
	v_wname VARCHAR(10);
	v_dname VARCHAR(10);
	v_street1 VARCHAR(20);
	v_street2 VARCHAR(20);
	v_city VARCHAR(20);
	v_state CHAR(2);
	v_zip CHAR(9);
	v_cid INT := p_c;
	v_n INT;
	v_credit CHAR(2);
	v_balance NUMERIC(12,2);
	v_data VARCHAR(500);
BEGIN
	UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
	SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name INTO v_street1, v_street2, v_city, v_state, v_zip, v_wname
		FROM warehouse WHERE w_id = p_w;
	UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
	SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name INTO v_street1, v_street2, v_city, v_state, v_zip, v_dname
		FROM district WHERE d_w_id = p_w AND d_id = p_d;
	IF p_by_name = 1 THEN
		-- Clause 2.5.2.2: the middle one of the customers with that last
		-- name, sorted by first name (the client's id when there is none).
		SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last;
		IF v_n > 0 THEN
			SELECT c_id INTO v_cid FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last
				ORDER BY c_first LIMIT 1 OFFSET (v_n + 1) / 2 - 1;
		END IF;
	END IF;
	SELECT c_credit, c_balance INTO v_credit, v_balance FROM customer
		WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid FOR UPDATE;
	IF v_credit = 'BC' THEN
		SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
		UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
			c_payment_cnt = c_payment_cnt + 1,
			c_data = left(v_cid || ' ' || p_cd || ' ' || p_cw || ' ' || p_d || ' ' || p_w || ' ' || p_amount || '|' || v_data, 500)
			WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
	ELSE
		UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
			c_payment_cnt = c_payment_cnt + 1
			WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
	END IF;
	INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (p_cd, p_cw, v_cid, p_d, p_w, p_date, p_amount, v_wname || '    ' || v_dname);
	RETURN 0;
END
$$
-- next procedure
CREATE FUNCTION dbduel_tpcc_order_status(p_w INT, p_d INT, p_c INT, p_by_name INT, p_last VARCHAR(16))
	RETURNS INT LANGUAGE plpgsql AS $$
DECLARE
	v_cid INT := p_c;
	v_n INT;
	v_oid INT;
	v_balance NUMERIC(12,2);
	v_first VARCHAR(16);
	v_middle CHAR(2);
	v_last VARCHAR(16);
	v_carrier INT;
	v_entry TIMESTAMP;
	v_lines INT;
	v_qty NUMERIC(12,2);
BEGIN
	IF p_by_name = 1 THEN
		SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
		IF v_n > 0 THEN
			SELECT c_id INTO v_cid FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last
				ORDER BY c_first LIMIT 1 OFFSET (v_n + 1) / 2 - 1;
		END IF;
	END IF;
	SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
		FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_cid;
	SELECT o_id, o_carrier_id, o_entry_d INTO v_oid, v_carrier, v_entry FROM orders
		WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_cid ORDER BY o_id DESC LIMIT 1;
	IF FOUND THEN
		SELECT COUNT(*), SUM(ol_quantity) INTO v_lines, v_qty FROM order_line
			WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_oid;
	END IF;
	RETURN 0;
END
$$
-- next procedure
CREATE FUNCTION dbduel_tpcc_delivery(p_w INT, p_carrier INT, p_date TIMESTAMP) RETURNS INT LANGUAGE plpgsql AS $$
DECLARE
	v_oid INT;
	v_cid INT;
	v_sum NUMERIC(12,2);
BEGIN
	-- All ten districts in one transaction, as HammerDB runs it.
	FOR v_d IN 1..10 LOOP
		SELECT no_o_id INTO v_oid FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
		IF FOUND THEN
			DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_oid;
			SELECT o_c_id INTO v_cid FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_oid;
			UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_oid;
			UPDATE order_line SET ol_delivery_d = p_date WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_oid;
			SELECT COALESCE(SUM(ol_amount), 0) INTO v_sum FROM order_line WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_oid;
			UPDATE customer SET c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
				WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_cid;
		END IF;
	END LOOP;
	RETURN 0;
END
$$
-- next procedure
CREATE FUNCTION dbduel_tpcc_stock_level(p_w INT, p_d INT, p_threshold INT) RETURNS INT LANGUAGE plpgsql AS $$
DECLARE
	v_next INT;
	v_low INT;
BEGIN
	SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
	SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line, stock
		WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
		AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
	RETURN 0;
END
$$
